"""``expbank serve-model MODEL [--adapter DIR] [--host H] [--port N]``: a local model behind an
OpenAI-compatible API (see ``expbank.training.actors.serve_model`` for the endpoints)."""

from __future__ import annotations

import argparse
import sys

from expbank.training.actors.backends import HFBackend
from expbank.training.actors.serve_model import LOOPBACK, create_app, served_name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL", help="smollm2-135m, tiny-random, a local directory or a hub name")
    parser.add_argument("--adapter", metavar="DIR", help="a PEFT adapter directory to apply")
    parser.add_argument("--host", default="127.0.0.1", help="default loopback only")
    parser.add_argument("--port", type=int, default=8000)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    if args.host not in LOOPBACK:
        sys.stderr.write("expbank serve-model: warning: listening beyond loopback, without authentication\n")
    backend = HFBackend(args.model, adapter=args.adapter)
    name = served_name(args.model, args.adapter)
    sys.stderr.write(f"expbank serve-model: {name} at http://{args.host}:{args.port}/v1\n")
    uvicorn.run(create_app(backend, name), host=args.host, port=args.port, log_level="info")
    return 0
