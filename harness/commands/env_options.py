"""Defaults from the environment: ``HARNESS_*`` for the common options, ``OPENAI_BASE_URL``.

`ENVIRONMENT` is the one table of the variables the command line reads, with the option each
gives a default to; ``harness --help`` lists it (`environment_epilog`), and each option's help
names its variable. A value given on the command line always wins over the variable. A bad
value is refused with one line naming the variable (`EnvValueError`, exit 2), never ignored.

Invariants: a variable that is unset or empty leaves the option's own default; a set one is
parsed by the option's own rule (`positive_int`, the tokenizer names), so the two cannot differ.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import TypeVar

from harness.plain import EnvValueError

T = TypeVar("T")
WINDOW_ENV = "HARNESS_WINDOW"
"""The variable of ``--window``'s default."""

ENVIRONMENT: dict[str, tuple[str, str]] = {
    "HARNESS_WINDOW": ("--window", "the context window in tokens (compact, log, tool, demo)"),
    "HARNESS_TOKENIZER": ("--tokenizer", "the token counter (compact, import, log, modes)"),
    "HARNESS_STORE": ("LOG", "the log or store URL a command reads when LOG is left out"),
    "OPENAI_BASE_URL": ("--base-url", "the OpenAI-compatible API root, as the OpenAI SDK reads it"),
    "HARNESS_DEBUG": ("", "set to 1 to see the traceback of an unexpected error"),
}
"""Each variable, the option it gives a default to, and what it holds."""


def env_value(name: str, parse: Callable[[str], T], fallback: T) -> T:
    """Return variable `name` parsed by `parse`, or `fallback` when it is unset or empty.

    Raises:
        EnvValueError: the variable is set to a value `parse` refuses.
    """
    raw = os.environ.get(name, "")
    if not raw.strip():
        return fallback
    try:
        return parse(raw.strip())
    except (ValueError, TypeError, argparse.ArgumentTypeError) as exc:
        raise EnvValueError(name, raw, str(exc)) from None


def env_choice(name: str, choices: Sequence[str], fallback: str) -> str:
    """Return variable `name` when it is one of `choices`, or `fallback` when unset or empty."""

    def one_of(text: str) -> str:
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return text

    return env_value(name, one_of, fallback)


def openai_base_url(given: str | None) -> str | None:
    """Return ``--base-url`` when given, else ``OPENAI_BASE_URL`` (as the OpenAI SDK reads it)."""
    return given or os.environ.get("OPENAI_BASE_URL", "").strip() or None


def store_default() -> str | None:
    """Return ``HARNESS_STORE``: the LOG a command reads when LOG is left out (None: unset)."""
    return os.environ.get("HARNESS_STORE", "").strip() or None


def add_tokenizer_option(p: argparse.ArgumentParser) -> None:
    """Add ``--tokenizer NAME`` (default ``o200k_base``, or ``HARNESS_TOKENIZER``)."""
    from compaction.tokens import TOKENIZER_NAMES

    p.add_argument(
        "--tokenizer",
        choices=TOKENIZER_NAMES,
        default=env_choice("HARNESS_TOKENIZER", TOKENIZER_NAMES, "o200k_base"),
        help=with_env("token counter (default: %(default)s)", "HARNESS_TOKENIZER"),
    )


def with_env(help_text: str, name: str) -> str:
    """Return an option's help naming the variable that gives its default."""
    return f"{help_text}; env {name}"


def environment_epilog() -> str:
    """Return the ``environment:`` part of ``harness --help``: one variable a line."""
    width = max(map(len, ENVIRONMENT))
    lines = [f"  {name:<{width}}  {what}" for name, (_, what) in ENVIRONMENT.items()]
    return "\n".join(["environment:", *lines])
