"""The commands of `harness`, one module each; `COMMANDS` maps each name to its module.

Invariants: a command's module is imported only when the command line names it (or asks for
the full list, as ``harness --help`` does), so a command pays only for what it uses; each module
has a ``register(subparsers)`` function that adds that one command's parser and sets ``func``.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

Register = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

COMMANDS: dict[str, str] = {
    "demo": "harness.commands.demo_cmd",
    "todo-write": "harness.commands.todo_write_cmd",
    "todos": "harness.commands.todos_cmd",
    "tool": "harness.commands.tool_cmd",
    "tasks": "harness.commands.tasks_cmd",
    "log": "harness.commands.log_cmd",
    "compact": "harness.commands.compact_cmd",
    "import": "harness.commands.import_cmd",
    "sessions": "harness.commands.sessions_cmd",
    "copy": "harness.commands.copy_cmd",
    "prompt": "harness.commands.prompt_cmd",
    "context": "harness.commands.context_cmd",
    "modes": "harness.commands.modes_cmd",
    "bench": "harness.commands.bench_cmd",
    "hooks": "harness.commands.hooks_cmd",
    "completion": "harness.commands.completion_cmd",
}
"""Each command's name and the module that registers it, in the order ``--help`` lists them."""


def register_of(name: str) -> Register:
    """Import the module of command `name` and return its ``register`` function."""
    register: Register = importlib.import_module(COMMANDS[name]).register
    return register


__all__ = ["COMMANDS", "register_of"]
