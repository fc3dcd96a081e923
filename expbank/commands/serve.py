"""``expbank serve BANK``: the bank's HTTP service (expbank/bank/service.py), or with ``--mcp`` its Model Context
Protocol server (expbank/bank/mcp_server.py: stdio, or streamable HTTP with ``--port``)."""

from __future__ import annotations

import argparse
import os
import sys

from expbank.bank.mcp_server import create_server, http_app
from expbank.bank.store import Bank
from expbank.errors import UserError
from expbank.torch_threads import set_torch_threads

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARDS = ("0.0.0.0", "::", "")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bank", metavar="BANK")
    parser.add_argument("--host", default="127.0.0.1", help="default loopback only")
    parser.add_argument("--port", type=int, default=None, help="default 8765; with --mcp, serve streamable "
                                                                 "HTTP on this port instead of stdio")
    parser.add_argument("--mcp", action="store_true", help="serve the bank as MCP tools (retrieve_experience, "
                        "bank_stats, and record_episode with --writable) over stdio, or HTTP with --port")
    parser.add_argument("--token", help="require 'Authorization: Bearer TOKEN' or 'X-API-Key: TOKEN' on every "
                                        "route (default: $EXPBANK_TOKEN); needed with --writable")
    parser.add_argument("--writable", action="store_true",
                        help="enable POST /feedback (utility credit); never for evaluation; needs a token")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="also accept requests whose Host header is NAME (repeatable; '*' accepts any); "
                             "loopback names and --host are always accepted")
    parser.add_argument("--max-body-bytes", type=int, default=64 * 1024)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from expbank.bank.service import create_app

    token = os.environ.get("EXPBANK_TOKEN") if args.token is None else args.token
    if token is not None and not token.strip():
        raise UserError("the token is empty (--token '' or an empty $EXPBANK_TOKEN); give a real token, or "
                        "unset both to serve read-only without one")
    if args.host in WILDCARDS and not args.allow_host:
        raise UserError(f"--host '{args.host}' accepts connections to any address: name the host names clients "
                        "use with --allow-host NAME (or --allow-host '*' to accept any Host header)")
    if args.host not in LOOPBACK and not token:
        sys.stderr.write("expbank serve: warning: listening beyond loopback without a token\n")
    if args.mcp and args.port is not None and args.writable and not token:
        raise UserError("a --writable MCP server over HTTP needs a token, since record_episode changes the bank: "
                        "pass --token T or set $EXPBANK_TOKEN (clients send 'Authorization: Bearer T'); over "
                        "stdio, without --port, only the client that starts it can reach it")
    bank = Bank.open(args.bank, writable=args.writable)
    set_torch_threads(default=1)  # a query is one short sentence
    _ = bank.embedder  # load the model before the first request
    if args.mcp:
        return _serve_mcp(args, bank, token)
    hosts = [*LOOPBACK, *([] if args.host in WILDCARDS else [args.host]), *args.allow_host]
    app = create_app(bank, token=token, writable=args.writable, max_body_bytes=args.max_body_bytes,
                     allowed_hosts=hosts)
    uvicorn.run(app, host=args.host, port=args.port or 8765, log_level="info")
    return 0


def _serve_mcp(args: argparse.Namespace, bank: Bank, token: str | None) -> int:
    """MCP over stdio (the client's subprocess: nothing listens) or streamable HTTP on ``--port``."""
    server = create_server(bank, writable=args.writable)
    if args.port is None:
        server.run("stdio")
        return 0
    import uvicorn

    uvicorn.run(http_app(server, token), host=args.host, port=args.port, log_level="info")
    return 0
