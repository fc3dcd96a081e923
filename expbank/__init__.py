"""expbank: an experience-bank trainer for agentic LLM tasks.

The top-level package holds the bank (schema, summarisers, store, retrieval, service), the trajectory
format, configs and the command line. Environments live in ``expbank.envs`` and training code in
``expbank.training``; see docs/architecture.md for the import rule.
"""

__version__ = "0.1.0"
