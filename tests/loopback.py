"""Real HTTP servers for tests: an ASGI app on a free 127.0.0.1 port in a thread (``serving``), as the
benchmarks serve their scripted actors."""

from __future__ import annotations

from expbank.training.actors.serve_model import free_port, serving

__all__ = ["free_port", "serving"]
