"""Import each real transcript, replay it with compaction, and report the figures per file.

For every file of ../shared/transcripts (or ``--transcripts DIR``): import it (`load`), then
replay the events into a fresh session with a small context window (`replay`, default 8,192
tokens) so that this toolkit's compactor runs whenever the context is due. Per file it reports
the tokens before (every message imported: the context had nothing been compacted; and the
context at the end with only the agent's own recorded compactions) and after (the context at the
end of the replay), the todo items each checkpoint kept (and whether every unfinished item stood
verbatim in its section), the messages kept verbatim, and the time taken by import and replay.

Run: ``python -m benchmarks.replay.transcript_imports`` (writes ``benchmarks/results/import.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import CHECKOUT
from compaction import CompactionPolicy, Session, check_log, get_tokenizer, parse_checkpoint
from compaction.importers import ImportReport, ReplayReport, load, replay

ROOT = CHECKOUT
DEFAULT_TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "import.json"
SUFFIXES = (".jsonl", ".json", ".traj")


def carried_verbatim(replayed: ReplayReport) -> bool:
    """Tell whether every unfinished item stood, verbatim, in its section at every cut."""
    for c in replayed.compactions:
        parsed = parse_checkpoint(c.result.data.text)
        if (parsed.pending_jobs, parsed.current_work) != c.unfinished:
            return False
    return True


def bench_file(path: Path, window: int, workdir: Path) -> dict[str, Any]:
    """Import and replay one transcript; return its figures."""
    tokenizer = get_tokenizer()
    report = ImportReport(path=str(path))
    start = time.perf_counter()
    events = list(load(path, report=report, tokenizer=tokenizer))
    imported = time.perf_counter()
    with Session(workdir / f"{path.stem}.jsonl", tokenizer=tokenizer, sync="batch") as session:
        replayed = replay(events, session, CompactionPolicy(window_tokens=window))
        done = time.perf_counter()
        check_log(session.events())
        after = session.context_tokens
        kept_messages = len(session.context.messages)
    items = [len(c.unfinished[0]) + len(c.unfinished[1]) for c in replayed.compactions]
    return {
        "file": path.name,
        "format": report.format,
        "records": report.records,
        "events": report.events,
        "turns": report.turns,
        "tool_calls": report.tool_calls,
        "todo_writes": report.todo_writes,
        "recorded_compactions": report.checkpoints,
        "tokens_all_messages": report.total_tokens,
        "tokens_before": report.context_tokens,
        "tokens_after": after,
        "peak_context_tokens": replayed.peak_context_tokens,
        "compactions": len(replayed.compactions),
        "compactions_with_open_todos": sum(1 for n in items if n),
        "todo_items_kept": sum(items),
        "todo_items_kept_max": max(items, default=0),
        "every_unfinished_todo_verbatim": carried_verbatim(replayed),
        "messages_kept": kept_messages,
        "compactions_refused": dict(sorted(replayed.refused.items())),
        "import_seconds": round(imported - start, 3),
        "replay_seconds": round(done - imported, 3),
    }


def main(argv: list[str] | None = None) -> int:
    """Import and replay every transcript in the folder; write the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--transcripts", type=Path, default=DEFAULT_TRANSCRIPTS)
    parser.add_argument("--window", type=int, default=8192, help="context window, in tokens")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not args.transcripts.is_dir():
        print(f"no transcripts folder at {args.transcripts}; nothing to measure", file=sys.stderr)
        return 1
    files = sorted(p for p in args.transcripts.iterdir() if p.suffix in SUFFIXES)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [bench_file(path, args.window, Path(tmp)) for path in files]
    result = {"window_tokens": args.window, "tokenizer": get_tokenizer().name, "files": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for row in rows:
        print(
            f"{row['file']}: {row['tokens_all_messages']} tokens in all messages, "
            f"{row['tokens_before']} in the agent's final context -> {row['tokens_after']} after "
            f"{row['compactions']} compactions; todo items kept {row['todo_items_kept']} "
            f"(verbatim: {row['every_unfinished_todo_verbatim']}); "
            f"import {row['import_seconds']}s, replay {row['replay_seconds']}s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
