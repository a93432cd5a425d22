"""A seeded fuzz of the two hostile inputs that reach code most often: tool arguments, templates.

``todo_write``: random argument texts (mutated valid calls, duplicate keys, invisible and
right-to-left characters, lone surrogates, deep nesting, random bytes, oversize payloads) run
against a real session log. A crash is any exception out of `todo_write`; a lost byte is any byte
of the log that is not still there, unchanged, after the call; a rejected call must leave the log
byte-identical and an accepted one must append exactly the list it was given.

Templates: random templates assembled from hostile fragments (attribute escapes, bombs, loops,
includes of themselves and of files outside the folder, arithmetic errors) rendered through
`prompts.render`. A crash is anything but a `ConfigError`, a render slower than its
limit, or a file written by a template.

Run it: ``python -m benchmarks.attacks.fuzz_safety --cases N [--seed S] [--out FILE]``; it writes
the figures as JSON (default ``benchmarks/results/fuzz.json``) and prints them.

Invariants: the same arguments give the same cases; everything happens in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks import RESULTS
from compaction import ConfigError, Session, TodoWritten, read_events
from prompts import LIMITS, render

DEFAULT_OUT = RESULTS / "fuzz.json"

_TEXTS = (
    "Run the tests",
    "",
    " ",
    "\u200b",
    "\ufeff",
    "\u202e evil",
    "\u200e\u200f",
    "# heading\n## Pending Jobs",
    "{{ 7 * 7 }}",
    "{% include 'x' %}",
    "\ud800",
    "a" * 5000,
    "\u4e2d" * 300,
    "```\ncode\n```",
    "\x00\x1f",
)
_STATUSES = ("pending", "in_progress", "completed", "done", "", "PENDING", None, 1)


@dataclass
class Figures:
    """What one target of the fuzz saw."""

    cases: int = 0
    crashes: int = 0
    bytes_lost: int = 0
    accepted: int = 0
    rejected: int = 0
    max_seconds: float = 0.0
    examples: list[str] = field(default_factory=list)
    """The first few crashing inputs, as reprs, to reproduce them."""

    def crash(self, case: str, why: str) -> None:
        """Count a crash and keep its first examples."""
        self.crashes += 1
        if len(self.examples) < 5:
            self.examples.append(f"{why}: {case[:300]!r}")


def _item(rng: random.Random) -> dict[str, object]:
    item: dict[str, object] = {"content": rng.choice(_TEXTS), "status": rng.choice(_STATUSES)}
    if rng.random() < 0.1:
        item["id"] = rng.randint(0, 9)
    if rng.random() < 0.05:
        del item["status"]
    return item


def todo_arguments(rng: random.Random) -> str | bytes:
    """Return one random, usually hostile, argument text for `todo_write`."""
    kind = rng.randrange(10)
    items = [_item(rng) for _ in range(rng.randint(0, 6))]
    text = json.dumps({"todos": items}, ensure_ascii=rng.random() < 0.5)
    if kind == 0:
        return text.replace('{"todos": ', '{"todos": [], "todos": ', 1)
    if kind == 1:
        return "[" * rng.randint(1, 50_000) + "]" * rng.randint(0, 50_000)
    if kind == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
    if kind == 3 and text:
        pos = rng.randrange(len(text))
        return text[:pos] + rng.choice('{}[]",:\\ \u200b') + text[pos + 1 :]
    if kind == 4:
        return json.dumps({"todos": [{"content": "\u4e2d" * 340_000, "status": "pending"}]})
    if kind == 5:
        return json.dumps({"todos": items, "extra": {"a": [1] * rng.randint(0, 10)}})
    statuses = ("pending", "in_progress", "completed", "pending", "completed")
    valid = [
        {"content": f"Task {i}: {rng.choice(_TEXTS)[:40]}x", "status": rng.choice(statuses)}
        for i in range(rng.randint(0, 6))
    ]
    return json.dumps({"todos": valid}, ensure_ascii=rng.random() < 0.5)


def _common_prefix(a: bytes, b: bytes) -> int:
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def fuzz_todo_write(cases: int, rng: random.Random, folder: Path) -> Figures:
    """Run `cases` random calls against one growing log; count crashes and lost bytes."""
    figures = Figures()
    log = folder / "fuzz.jsonl"
    with Session(log) as session:
        for _ in range(cases):
            args = todo_arguments(rng)
            before = log.read_bytes() if log.exists() else b""
            started = time.perf_counter()
            try:
                result = session.todo_write(args)
            except Exception as exc:  # a crash is what this fuzz looks for
                figures.crash(repr(args), f"{type(exc).__name__}: {exc}")
                continue
            figures.cases += 1
            figures.max_seconds = max(figures.max_seconds, time.perf_counter() - started)
            after = log.read_bytes() if log.exists() else b""
            if not after.startswith(before):
                lost = next(
                    i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b
                )
                figures.bytes_lost += len(before) - lost
            if result.is_error:
                figures.rejected += 1
                if after != before:
                    figures.crash(repr(args), "a rejected call changed the log")
            else:
                figures.accepted += 1
                if after.count(b"\n") != before.count(b"\n") + 1:
                    figures.crash(repr(args), "an accepted call did not append one line")
    events = list(read_events(log)) if log.exists() else []
    writes = sum(isinstance(e, TodoWritten) for e in events)
    if writes != figures.accepted:
        figures.crash("(whole log)", f"{writes} todo/write events for {figures.accepted} accepted")
    return figures


_FRAGMENTS = (
    "plain text ",
    "{{ mode.title }}",
    "{{ mode.template_dir }}",
    "{{ mode.__class__.__mro__ }}",
    "{{ ''.__class__.__base__.__subclasses__() }}",
    "{{ self._TemplateReference__context }}",
    "{{ cycler.__init__.__globals__ }}",
    '{{ "a" * 4000000000 }}',
    '{{ ["x"] * 999999999 }}',
    "{{ 9 ** 9999999 }}",
    '{{ "%0999999999d" % 1 }}',
    '{{ "{:>999999999}".format(1) }}',
    '{{ "a" | center(999999999) }}',
    '{{ ("a" * 999999) | replace("", "bb") }}',
    '{{ ("ab" * 400000) | wordwrap(1, wrapstring="x" * 9999) }}',
    '{{ "x" | indent(999999999) }}',
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    '{% for i in range(99999) %}{{ "y" * 999 }}{% endfor %}',
    '{% set ns = namespace(s="ab") %}{% for i in range(80) %}{% set ns.s = ns.s ~ ns.s %}'
    "{% endfor %}",
    "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    '{% include "fuzz.md.j2" %}',
    '{% import "fuzz.md.j2" as me %}',
    '{% include "../outside.txt" %}',
    '{% include "link.md.j2" %}',
    "{{ 1 / 0 }}",
    '{{ 1 + "a" }}',
    "{{ 10.0 ** 400 }}",
    "{{ undefined_name }}",
    "{{ tool_names | join(', ') }}",
    "{{ lipsum(99999) }}",
    "{% if %}",
    "{{ [1, 2] | random }}",
)


def template_text(rng: random.Random) -> str:
    """Return one random template assembled from hostile fragments."""
    return "".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, 4)))


def fuzz_templates(cases: int, rng: random.Random, folder: Path) -> Figures:
    """Render `cases` random templates; count anything but a ConfigError, and slow renders."""
    figures = Figures()
    templates = folder / "templates"
    templates.mkdir()
    (folder / "outside.txt").write_text("SECRET")
    (templates / "link.md.j2").symlink_to(folder / "outside.txt")
    context = {"mode": {"title": "Fuzz"}, "tool_names": ["read", "write"]}
    for _ in range(cases):
        text = template_text(rng)
        (templates / "fuzz.md.j2").write_text(text)
        started = time.perf_counter()
        try:
            output = render("fuzz.md.j2", context, folder=templates)
        except ConfigError:
            figures.rejected += 1
            output = ""
        except BaseException as exc:  # a crash is what this fuzz looks for
            figures.crash(text, f"{type(exc).__name__}: {exc}")
            continue
        else:
            figures.accepted += 1
        elapsed = time.perf_counter() - started
        figures.cases += 1
        figures.max_seconds = max(figures.max_seconds, elapsed)
        if elapsed > LIMITS.max_seconds:
            figures.crash(text, f"rendering took {elapsed:.1f}s")
        if "SECRET" in output:
            figures.crash(text, "a template read a file outside its folder")
        written = {p.name for p in templates.iterdir()} - {"fuzz.md.j2", "link.md.j2"}
        if written:
            figures.crash(text, f"a template wrote {sorted(written)}")
    return figures


def run(cases: int, seed: int) -> dict[str, object]:
    """Fuzz both targets with `cases` cases each; return the figures as JSON data."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "todo").mkdir()
        (folder / "tpl").mkdir()
        todo = fuzz_todo_write(cases, rng, folder / "todo")
        templates = fuzz_templates(cases, rng, folder / "tpl")
    return {
        "command": f"python -m benchmarks.attacks.fuzz_safety --cases {cases} --seed {seed}",
        "seed": seed,
        "todo_write": asdict(todo),
        "templates": asdict(templates),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the fuzz, write the figures, print them; exit 1 if anything crashed or was lost."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.attacks.fuzz_safety")
    parser.add_argument("--cases", type=int, default=2000, help="cases per target (2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generator (0)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    args = parser.parse_args(argv)
    figures = run(args.cases, args.seed)
    text = json.dumps(figures, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    bad = [
        figures[k]["crashes"] + figures[k]["bytes_lost"]  # type: ignore[index]
        for k in ("todo_write", "templates")
    ]
    return 1 if any(bad) else 0


if __name__ == "__main__":
    raise SystemExit(main())
