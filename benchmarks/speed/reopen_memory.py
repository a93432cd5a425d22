"""A fresh process's peak resident memory reopening a log: what the views hold, not the log.

`reopen_rss` runs a new interpreter that opens the log as a `compaction.Session`, reads its
context, todos and tasks, then `context_tokens` (from the count the log's newest checkpoint
recorded when the log ends in it: no tokenizer), then appends one user message and makes the
check `maybe_compact` makes (the tokenizer loads to count the new message), and reports its own
high-water mark at each point. `benchmarks.speed.throughput` records it per size.

Invariants: the measuring process is fresh (nothing of the caller's memory counts); the third
step appends to the log (the benchmark's own, thrown away after it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_RSS_SCRIPT = """
import resource, sys
from compaction import CompactionPolicy, Message, Session, compaction_due
def peak():
    try:  # this process's own high-water mark (ru_maxrss keeps the forking parent's)
        with open("/proc/self/status") as status:
            line = next(x for x in status if x.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
with Session(sys.argv[1]) as s:
    s.context, s.latest_todos, s.tasks
    views = peak()
    s.context_tokens
    counted = peak()
    s.append(Message(role="user", content="One more request."))
    compaction_due(s, CompactionPolicy())
print(views, counted, peak())
"""


def reopen_rss(log: Path) -> tuple[float, float, float]:
    """Return a fresh process's peak RSS in MiB reopening `log`: views, count, then one append.

    Read from ``VmHWM`` (Linux: the process's own high-water mark; ``ru_maxrss`` would report the
    forking parent's), else ``ru_maxrss`` (KiB on Linux; bytes on macOS).
    """
    done = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, str(log)],
        capture_output=True,
        text=True,
        timeout=3_600,
        check=True,
    )
    views, counted, appended = (round(float(x), 1) for x in done.stdout.split())
    return views, counted, appended
