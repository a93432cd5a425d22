"""The commands of `harness`, one module each; `COMMANDS` lists their `register` functions."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from harness.commands import (
    bench_cmd,
    compact_cmd,
    context_cmd,
    copy_cmd,
    demo_cmd,
    import_cmd,
    log_cmd,
    modes_cmd,
    prompt_cmd,
    sessions_cmd,
    todo_write_cmd,
    todos_cmd,
)

Register = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

COMMANDS: tuple[Register, ...] = (
    demo_cmd.register,
    todo_write_cmd.register,
    todos_cmd.register,
    log_cmd.register,
    compact_cmd.register,
    import_cmd.register,
    sessions_cmd.register,
    copy_cmd.register,
    prompt_cmd.register,
    context_cmd.register,
    modes_cmd.register,
    bench_cmd.register,
)

__all__ = ["COMMANDS", "Register"]
