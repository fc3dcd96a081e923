"""``expbank serve BANK``: the bank's HTTP service (see expbank/bank/service.py)."""

from __future__ import annotations

import argparse
import os
import sys

from expbank.bank.store import Bank


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bank", metavar="BANK")
    parser.add_argument("--host", default="127.0.0.1", help="default loopback only")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--token", help="require 'Authorization: Bearer TOKEN' (default: $EXPBANK_TOKEN)")
    parser.add_argument("--writable", action="store_true",
                        help="enable POST /feedback (utility credit); never for evaluation")
    parser.add_argument("--max-body-bytes", type=int, default=64 * 1024)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from expbank.bank.service import create_app

    token = args.token or os.environ.get("EXPBANK_TOKEN")
    if args.host not in ("127.0.0.1", "localhost", "::1") and not token:
        sys.stderr.write("expbank serve: warning: listening beyond loopback without a token\n")
    bank = Bank.open(args.bank, writable=args.writable)
    _ = bank.embedder  # load the model before the first request
    app = create_app(bank, token=token, writable=args.writable, max_body_bytes=args.max_body_bytes)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0
