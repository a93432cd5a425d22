"""The words, templates and tool outputs of the generated sessions (`harness.simulation._sessions`).

Tables of nouns, verbs, errors and request templates, and the functions that write plausible tool
outputs from a `random.Random`: a numbered Python module (`source_file`), a pytest log
(`test_log`) and a line of code (`code_line`). Sizes follow a real Claude Code session (file
reads of 2-12 kB, test logs of 1-8 kB).

Invariants: every output is a pure function of its arguments (the random generator's state
included); `source_file` is cached on its arguments, which fully determine it.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Literal

Kind = Literal["read", "search", "edit", "test", "docs", "run"]

NOUNS = (
    "config",
    "parser",
    "cache",
    "session",
    "router",
    "retry",
    "metrics",
    "auth",
    "export",
    "schema",
    "report",
    "queue",
    "upload",
    "webhook",
    "billing",
    "scheduler",
    "migration",
    "search",
    "invoice",
    "profile",
)
PACKAGES = ("app", "core", "api", "services", "storage", "cli", "utils")
VERBS = ("load", "parse", "render", "validate", "flush", "fetch", "merge", "resolve", "encode")
ERRORS = (
    "KeyError: 'timeout'",
    "AssertionError: assert 3 == 2",
    "TypeError: 'NoneType' object is not subscriptable",
    "ValueError: invalid literal for int() with base 10: ''",
    "AttributeError: 'Settings' object has no attribute 'retries'",
    "sqlite3.OperationalError: no such column: created_at",
)

TEMPLATES: tuple[tuple[str, tuple[tuple[Kind, str], ...]], ...] = (
    (
        "Add a `--{flag}` option to the `{cmd}` command so that {noun} output can be {adj}. "
        "Keep the default behaviour unchanged and add tests.",
        (
            ("read", "Read how the `{cmd}` command parses its options"),
            ("edit", "Add the `--{flag}` option to the `{cmd}` parser"),
            ("edit", "Pass the {flag} setting through to the {noun} renderer"),
            ("edit", "Write tests for `--{flag}`"),
            ("test", "Run the test suite and fix failures"),
            ("docs", "Document `--{flag}` in the README"),
        ),
    ),
    (
        "The {noun} tests started failing after yesterday's merge with `{error}`. "
        "Find the cause and fix it without skipping any test.",
        (
            ("test", "Reproduce the {noun} test failure"),
            ("search", "Find where `{func}` changed in the merge"),
            ("read", "Read `{path}` around the failing call"),
            ("edit", "Fix the {noun} handling in `{path}`"),
            ("test", "Run the {noun} tests again"),
        ),
    ),
    (
        "Refactor `{path}` so that all {noun} handling lives in one module. "
        "Behaviour must stay identical; the public functions keep their names.",
        (
            ("search", "List every caller of the {noun} helpers"),
            ("read", "Read `{path}` and its tests"),
            ("edit", "Move the {noun} helpers into `{newpath}`"),
            ("edit", "Update the imports of every caller"),
            ("test", "Run the full test suite"),
            ("run", "Run the linter and type checker"),
        ),
    ),
    (
        "Add retry with exponential backoff to the {noun} client: at most {n} attempts, "
        "only on timeouts and 5xx responses, and log each retry.",
        (
            ("read", "Read the {noun} client in `{path}`"),
            ("edit", "Add a backoff helper with jitter"),
            ("edit", "Retry timeouts and 5xx responses in `{func}`"),
            ("edit", "Log each retry with its attempt number"),
            ("edit", "Write tests with a fake clock"),
            ("test", "Run the {noun} client tests"),
        ),
    ),
    (
        "Write a migration that renames the `{old}` column of the {noun} table to `{new}`, "
        "and update every query that uses it.",
        (
            ("search", "Find every query that uses `{old}`"),
            ("edit", "Write the migration renaming `{old}` to `{new}`"),
            ("edit", "Update the {noun} queries"),
            ("test", "Run the migration tests"),
            ("docs", "Note the rename in the changelog"),
        ),
    ),
)

PLAN_REQUEST = (
    "Before we change anything: plan how to add a {noun} export to CSV and JSON, streaming, "
    "with the same filters as the {noun} list endpoint. Read what you need, but do not edit "
    "files yet. Show me the plan first."
)
PLAN_STEPS: tuple[tuple[Kind, str], ...] = (
    ("read", "Read the {noun} list endpoint and its filters"),
    ("edit", "Add a streaming {noun} exporter for CSV and JSON"),
    ("edit", "Expose `GET /{noun}/export` with the list filters"),
    ("edit", "Write tests for both formats and an empty result"),
    ("test", "Run the API test suite"),
    ("docs", "Document the export endpoint"),
)
APPROVE = "The plan looks good. Go ahead, and keep the export memory-bounded."
INTERRUPT = "Stop that for now, something more urgent came up; we'll come back to it. {request}"
NARRATION = (
    "First I'll {what}.",
    "I'll {what} before changing anything else.",
    "Next, I'll {what}.",
    "Now to {what}.",
    "That explains it. Next I'll {what}.",
)
"""Narration before a step's tool calls; `{what}` is the todo item, an imperative verb phrase
("fix the upload handling"), so each template takes a verb phrase, never a noun."""


def code_line(r: random.Random, word: str) -> str:
    """Return one plausible line of Python that mentions `word`."""
    noun = r.choice(NOUNS)
    forms = (
        f"result = {word}({noun}, timeout=settings.{noun}_timeout)",
        f"if not {noun}.is_valid():",
        f"raise {noun.capitalize()}Error(f'cannot {r.choice(VERBS)} {{{noun}.id}}')",
        f"return [{word}(item) for item in {noun}_items if item.enabled]",
        f"logger.debug('{word}: %s', {noun}.name)",
        f"from app.{noun} import {word}",
    )
    return r.choice(forms)


@cache
def source_file(seed: int, path: str, version: int, lines: int) -> str:
    """A plausible Python module, numbered like a file-read tool shows it."""
    r = random.Random(f"{seed}:{path}:{version}:{lines}")
    noun = Path(path).stem
    body = [f'"""The {noun} module: {r.choice(VERBS)} and {r.choice(VERBS)} {noun} records."""']
    body += ["", "from __future__ import annotations", "", "import logging", ""]
    while len(body) < lines:
        verb = r.choice(VERBS)
        name = f"{verb}_{r.choice(NOUNS)}"
        body += [
            "",
            "",
            f"def {name}({noun}: {noun.capitalize()}, *, strict: bool = False) -> dict:",
        ]
        body.append(f'    """{verb.capitalize()} a {noun} and return its fields."""')
        for _ in range(r.randint(4, 14)):
            body.append("    " + code_line(r, name))
        body.append(f"    return {{'id': {noun}.id, 'status': {noun}.status}}")
    return "\n".join(f"{i:6d}\t{line}" for i, line in enumerate(body[:lines], 1))


def test_log(r: random.Random, failing: bool) -> str:
    """Return a pytest log: a failing one names its failures and their errors."""
    noun = r.choice(NOUNS)
    n = r.randint(30, 180)
    out = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0",
        f"collected {n} items",
        "",
    ]
    dots = "".join("F" if failing and r.random() < 0.04 else "." for _ in range(n))
    if failing and "F" not in dots:
        dots = "F" + dots[1:]
    for i in range(0, n, 60):
        out.append(f"tests/test_{noun}.py {dots[i : i + 60]}")
    fails = dots.count("F")
    if failing:
        out += [
            "",
            "=================================== FAILURES ===================================",
        ]
        for k in range(fails):
            out.append(
                f"_____________________ test_{r.choice(VERBS)}_{noun}_{k} _____________________"
            )
            for _ in range(r.randint(8, 25)):
                out.append("    " + code_line(r, f"{r.choice(VERBS)}_{noun}"))
            out.append(f"E   {r.choice(ERRORS)}")
        out.append(f"{'=' * 25} {fails} failed, {n - fails} passed in 3.21s {'=' * 26}")
    else:
        out.append(
            f"============================== {n} passed in 2.87s ==============================="
        )
    return "\n".join(out)
