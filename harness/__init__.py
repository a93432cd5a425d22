"""The `harness` package: the command line, the simulation engine, the integrations, a testing kit.

- `harness.cli` (the ``harness`` command; each subcommand imported on dispatch);
- `harness.simulation` (generated sessions and the replay engine behind ``harness demo``);
- `harness.integrations` (LangChain middleware, the OpenAI Agents SDK session; behind extras);
- `harness.testing` (a scripted model server speaking the providers' APIs).

Importing `harness` loads none of them; ``from harness import main`` loads the CLI.
"""

from __future__ import annotations

import importlib
import typing

if typing.TYPE_CHECKING:
    from harness.cli import build_parser, main

__all__ = ["build_parser", "main"]


def __getattr__(name: str) -> object:
    """Import the CLI's entry points on first use, so importing an integration skips the CLI."""
    if name in __all__:
        value = getattr(importlib.import_module("harness.cli"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
