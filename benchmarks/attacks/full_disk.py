"""The SQLite-after-a-full-disk attack class: a checkpoint the disk stopped is not damage.

A full disk (here a file-size limit, ``RLIMIT_FSIZE``, set in a child process) stops SQLite's
WAL checkpoint half way: the main file's header already declares every page, the file is
shorter, and the ``-wal`` beside it still holds every page. SQLite reads such a store whole
(its ``integrity_check`` says ok), so the store must open and every event must read back; no
message may call it truncated or damaged, or advise deleting the WAL or restoring a backup.

`full_disk_store` makes that state (the tests use it too); `sqlite_full_disk` runs it through
the command line with seeded sizes. Linux and macOS only (resource limits).

Invariants: the state is checked before a case counts (the header declares more pages than the
file holds, and a WAL is there), so a case never passes for want of the scenario.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks.attacks.attack_kit import Kit, Tally
from compaction import Message
from compaction.stores import SqliteStore

_CHILD = r"""
import os, resource, signal, sqlite3, sys
from compaction import Message
from compaction.stores import SqliteStore
path, events, size, room = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
store = SqliteStore(path)
for i in range(events):
    store.append("late", [Message(role="user", content=f"late {i} " + "y" * size)])
limit = os.path.getsize(path) + room
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
db = sqlite3.connect(path)
try:
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    print("checkpointed")
except sqlite3.Error as exc:
    print("stopped:", exc)
sys.stdout.flush()
os._exit(0)  # no close: closing would try the checkpoint again
"""


@dataclass(frozen=True)
class FullDisk:
    """A store left by a checkpoint a full disk stopped, and what it holds."""

    path: Path
    counts: dict[str, int]
    """Events per session."""
    declared: int
    """Bytes the main file's header declares (pages times page size)."""
    size: int
    """Bytes the main file holds (fewer)."""


def _declared(path: Path) -> int:
    head = path.read_bytes()[:100]
    page = int.from_bytes(head[16:18], "big")
    return int.from_bytes(head[28:32], "big") * (65536 if page == 1 else page)


def full_disk_store(path: Path, *, early: int = 10, late: int = 40, size: int = 20_000) -> FullDisk:
    """Make a store whose checkpoint a full disk stopped half way (see the module docstring).

    Raises:
        RuntimeError: the state did not come about (the checkpoint ran whole, or no WAL).
    """
    store = SqliteStore(path)
    store.append("early", [Message(role="user", content="e" * size) for _ in range(early)])
    store.close()
    root = Path(__file__).resolve().parents[2]
    room = max(size * late // 3, 65536)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(late), str(size), str(room)],
        capture_output=True, text=True, timeout=120, check=False, cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    state = FullDisk(path, {"early": early, "late": late}, _declared(path), path.stat().st_size)
    wal = path.with_name(path.name + "-wal")
    if "stopped:" not in done.stdout or state.size >= state.declared or not wal.exists():
        raise RuntimeError(f"no half-done checkpoint: {done.stdout!r} {done.stderr[-300:]!r}")
    return state


_ADVICE = ("truncated", "damaged", "backup", "-wal", "delete")
"""Words a message about a healthy store must not hold."""


def sqlite_full_disk(kit: Kit, tally: Tally) -> None:
    """A checkpoint stopped by a full disk: `sessions` and `log` read every event, exit 0."""
    if sys.platform == "win32":
        tally.skipped = "no RLIMIT_FSIZE on Windows"
        return
    for _ in range(kit.cases):
        tally.cases += 1
        folder = kit.folder()
        state = full_disk_store(
            folder / "s.db",
            early=kit.rng.randint(4, 12),
            late=kit.rng.randint(20, 40),
            size=kit.rng.choice((12_000, 20_000, 30_000)),
        )
        _case(kit, tally, state)
    tally.notes.append("checkpoint stopped by RLIMIT_FSIZE; main file shorter than its header")


def _case(kit: Kit, tally: Tally, state: FullDisk) -> None:
    url = f"sqlite:///{state.path}"
    listed = kit.cli(tally, ["sessions", url, "--json"])
    said = listed.stderr.lower()
    if listed.code != 0 or any(word in said for word in _ADVICE):
        tally.fail("wrong", f"sessions: exit {listed.code}: {listed.stderr.strip()[:200]}")
        return
    found = {s["session"]: s["events"] for s in json.loads(listed.stdout)["sessions"]}
    if found != state.counts:
        missing = sum(state.counts.values()) - sum(found.values())
        tally.fail("lost", f"sessions listed {found}, expected {state.counts}", max(missing, 1))
    shown = kit.cli(tally, ["log", url, "--session", "late", "--json"])
    if shown.code != 0 or json.loads(shown.stdout)["events"] != state.counts["late"]:
        tally.fail("wrong", f"log: exit {shown.code}: {shown.stderr.strip()[:200]}")
