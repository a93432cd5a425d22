"""The attack table of issue 25: every attack class, N seeded cases each, what went wrong.

For each class (store URL passwords, per-item caps, two `todo_write` calls in one response, the
task tools' stale versions, names and invisible subjects and closed stdin, damaged SQLite
files, a read-only SQLite store, `harness copy` interrupted or misled, compaction under
concurrent writers per backend, API keys echoed in base64 or another case, `compact` on a
binary file; issue 39's: a process killed inside a tool call then resumed, provider
refusals and hostile error and usage objects, inputs no log line can hold or forged spans,
`compact_context` called again and again, a checkpoint a full disk stopped, counts at cuts,
provider items, result clearing, quiet answers, password keys) it runs generated cases, mostly
through the real command line in subprocesses with a timeout each, and counts:

- **crashes**: a traceback, an exception out of the API, or an exit status outside the
  documented ones (0, 1, 2, 3, 130; 4 is "unexpected error");
- **lost** and **doubled**: bytes of the log (its file, or its events' canonical lines in a
  SQL store) that are gone, or that were written though nothing should have been;
- **leaks**: the secret, its upper, lower and swapped case, or its base64 (any alignment) in
  stdout, stderr or any file the case wrote;
- **hangs**: a case past its timeout;
- **wrong**: the defence's own outcome missed (a damaged store read as empty, an over-cap item
  accepted, a stale update applied, a session left half copied, a list silently lost).

Run it: ``python -m benchmarks.attacks.attack_table --out benchmarks/results [--cases N] [--seed
S]``; it writes ``attacks.json`` and ``attacks.md``. PostgreSQL classes start a throwaway server
(`harness/testing/_postgres_server.py`) and are recorded as skipped, with the reason, without one.

Invariants: the same arguments give the same cases (seeded per class); every case runs in its
own temporary folder; nothing reaches the network (the echoing server listens on 127.0.0.1).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks import RESULTS
from benchmarks.attacks import (
    full_disk,
    model_inputs,
    readonly_sqlite,
    storage_attacks,
    trust_attacks,
    trust_edges,
)
from benchmarks.attacks.attack_kit import Kit, Tally
from harness.testing import ServerUnavailable
from harness.testing import start_postgres as start_server

DEFAULT_OUT = RESULTS

Attack = Callable[[Kit, Tally], None]

ATTACKS: dict[str, tuple[Attack, str]] = {
    "store-url-passwords": (storage_attacks.store_urls, "userinfo, ?password= and keyword forms"),
    "item-caps": (model_inputs.item_caps, "JSON text and mappings, todo and task items"),
    "two-todo-writes": (model_inputs.two_todo_writes, "2-4 calls in one response"),
    "task-stale-versions": (model_inputs.stale_versions, "across processes and per agent"),
    "task-names": (model_inputs.task_names, "owner and agent with trailing newline etc."),
    "task-invisible-subjects": (model_inputs.invisible_subjects, "U+200B, BOM, U+202E, NUL"),
    "task-closed-stdin": (model_inputs.closed_stdin, "`harness tool` with fd 0 closed"),
    "sqlite-damage": (storage_attacks.sqlite_damage, "truncated, corrupt page, foreign, locked"),
    "sqlite-read-only": (readonly_sqlite.read_only_sqlite, "0444 file, 0555 or 0777 folder"),
    "sqlite-full-disk": (full_disk.sqlite_full_disk, "a checkpoint a full disk stopped"),
    "copy": (storage_attacks.copy_attacks, "SIGKILL, missing, symlink, damaged, stray file"),
    "concurrent-compaction": (storage_attacks.concurrent_compaction, "3 writers per backend"),
    "key-echoes": (model_inputs.key_echoes, "base64 and case-folded echoes of the key"),
    "compact-binary": (model_inputs.compact_binary, "random bytes given to `compact`"),
    "killed-tool-call": (
        trust_attacks.killed_tool_call,
        "1-4 calls, some answered; resumed by context (3 formats), a turn, compacting_call",
    ),
    "overflow-refusals": (
        trust_attacks.overflow_refusals,
        "6 wordings x statuses, hostile errors and usage, double refusals",
    ),
    "append-inputs": (
        trust_attacks.append_inputs,
        "lone surrogates, 4,300+ digit figures, forged checkpoint spans",
    ),
    "compact-context-floor": (trust_attacks.compact_context_floor, "3-12 calls in a row"),
    "token-counts": (trust_edges.token_counts, "heads and tails at cuts, between neighbours"),
    "provider-items": (trust_edges.provider_items, "the key in any form, foreign keys"),
    "result-clearing": (trust_edges.result_clearing, "parallel turns, boards, unanswered"),
    "quiet-answers": (trust_edges.quiet_answers, "missing stores and sessions, transcripts"),
    "password-keys": (trust_edges.password_keys, "pwd, passwd, sslpassword; query, keyword"),
}
"""Each class: its runner and what its cases vary."""


def _reproduce(name: str, cases: int, seed: int) -> str:
    return f"python -m benchmarks.attacks.attack_table --only {name} --cases {cases} --seed {seed}"


def run(
    cases: int,
    seed: int,
    *,
    only: Sequence[str] = (),
    in_process: bool = False,
    postgres_url: str | None = None,
    start_postgres: bool = True,
) -> list[Tally]:
    """Run every class (or `only` those) with `cases` cases each; return their tallies.

    Args:
        cases: cases per class (concurrent compaction runs ``max(1, cases // 10)`` rounds).
        seed: the seed; each class draws from its own ``Random(f"{seed}:{name}")``.
        only: class names to run (all when empty).
        in_process: run the command line in this process (fast, for the smoke test; no hang
            can be caught) instead of in subprocesses.
        postgres_url: a running server's URL; None starts a throwaway one if the binaries
            exist, and skips the PostgreSQL parts (stated in the tally) otherwise.
        start_postgres: False: without `postgres_url`, skip the PostgreSQL parts.
    """
    unknown = sorted(set(only) - set(ATTACKS))
    if unknown:
        raise SystemExit(f"attacks: unknown class {unknown[0]!r} (known: {', '.join(ATTACKS)})")
    names = [n for n in ATTACKS if not only or n in only]
    server = None
    why_no_pg = None if start_postgres else "not started (start_postgres=False)"
    if postgres_url is None and start_postgres:
        try:
            server = start_server(durable=False)
            postgres_url = server.url
        except ServerUnavailable as exc:
            why_no_pg = f"no PostgreSQL server: {str(exc)[:200]}"
    tallies: list[Tally] = []
    try:
        for name in names:
            attack, varies = ATTACKS[name]
            tally = Tally(name, varies=varies, command=_reproduce(name, cases, seed))
            with tempfile.TemporaryDirectory(prefix=f"attack-{name}-") as tmp:
                kit = Kit(
                    rng=random.Random(f"{seed}:{name}"),
                    cases=cases,
                    root=Path(tmp),
                    in_process=in_process,
                    postgres_url=postgres_url,
                    why_no_postgres=why_no_pg,
                )
                attack(kit, tally)
            tallies.append(tally)
    finally:
        if server is not None:
            server.stop()
    return tallies


COLUMNS = ("cases", "crashes", "lost", "doubled", "leaks", "hangs", "wrong")


def markdown(tallies: Sequence[Tally], cases: int, seed: int) -> str:
    """The table as Markdown: one row per class, then the notes and the reproducing commands."""
    lines = [
        "# Attack table (issue 25)",
        "",
        f"Generated by `python -m benchmarks.attacks.attack_table --cases {cases} --seed {seed}`. "
        "lost / doubled: bytes of the log (file bytes, or SQL events' canonical lines).",
        "",
        "| attack class | cases | crashes | lost | doubled | leaks | hangs | wrong | notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for t in tallies:
        cells = [str(getattr(t, c)) for c in COLUMNS]
        note = "; ".join([*t.notes, *([f"skipped: {t.skipped}"] if t.skipped else [])])
        lines.append(f"| {t.attack} | {' | '.join(cells)} | {note} |")
    lines += ["", "Reproduce one class:", "", "```"]
    lines += [t.command for t in tallies]
    lines += ["```", ""]
    examples = [(t.attack, e) for t in tallies for e in t.examples]
    if examples:
        lines += ["First failures:", ""]
        lines += [f"- {name}: {text}" for name, text in examples]
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the attacks; write ``attacks.json`` and ``attacks.md`` to ``--out``."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.attacks.attack_table", description=__doc__
    )
    parser.add_argument("--cases", type=int, default=20, help="cases per class (default 20)")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the results")
    parser.add_argument("--only", action="append", default=[], help="run only this class")
    parser.add_argument("--in-process", action="store_true", help="no subprocesses (faster)")
    args = parser.parse_args(argv)
    if args.cases < 1:
        parser.error(f"--cases must be a positive integer, not {args.cases}")
    tallies = run(args.cases, args.seed, only=args.only, in_process=args.in_process)
    args.out.mkdir(parents=True, exist_ok=True)
    doc = {"cases": args.cases, "seed": args.seed, "attacks": [t.as_json() for t in tallies]}
    (args.out / "attacks.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    table = markdown(tallies, args.cases, args.seed)
    (args.out / "attacks.md").write_text(table)
    sys.stdout.write(table)
    failed = sum(t.crashes + t.lost + t.doubled + t.leaks + t.hangs + t.wrong for t in tallies)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
