"""The read-only SQLite attack class: a store its user cannot write is read, and writes refused.

Each case makes a store of a few sessions, then takes away write permission: the file 0444 in
a folder 0555 (no journal and no WAL ``-shm`` file can be made beside it), or the file 0444
in a folder anyone may write. It then runs, as a user the permissions bind (uid 65534 through
``setpriv`` or ``runuser`` when this runs as root; this user otherwise), a read (`harness
sessions`, `harness log`) that must exit 0 with every event, and a write (`harness tool ...
task_create`, `harness todo-write`) that must exit 3 in one line naming the file, with the
store's events unchanged.

Invariants: the checks run in subprocesses of their own whatever the kit's `in_process` (a
user is a process's); with no way to drop root's powers the class is skipped and says why.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

from benchmarks.attacks.attack_kit import Kit, Tally, check_bytes
from compaction import Session
from compaction.stores import SqliteStore

NOBODY = 65534
"""The unprivileged user's uid and gid (``nobody`` on Debian and most Linux systems)."""

TODOS = json.dumps({"todos": [{"content": "a", "status": "pending"}]})


def unprivileged() -> list[str] | None:
    """Return the command prefix that drops root's powers ([] when not root; None: no way)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    if shutil.which("runuser"):
        return ["runuser", "-u", "nobody", "--"]
    return None


def _store(path: Path, sessions: int, tasks: int) -> dict[str, int]:
    """Write a store of `sessions` sessions; return each one's event count."""
    store = SqliteStore(path)
    counts = {}
    for k in range(sessions):
        with Session(store=store, session=f"s{k}") as session:
            session.start_turn(f"Fix {k}", mode="agent")
            for i in range(tasks):
                session.task_create({"subject": f"task {k}.{i}"})
        counts[f"s{k}"] = store.last_seq(f"s{k}")
    store.close()
    return counts


def read_only_sqlite(kit: Kit, tally: Tally) -> None:
    """Reads of a read-only store exit 0 with every event; writes exit 3, one line, no change."""
    user = unprivileged()
    if user is None:
        tally.skipped = "running as root without setpriv or runuser: permissions do not apply"
        return
    kit.root.chmod(0o755)  # the other user runs in it
    for _ in range(kit.cases):
        tally.cases += 1
        folder = kit.folder()
        counts = _store(folder / "s.db", kit.rng.randint(1, 3), kit.rng.randint(0, 4))
        kind = kit.rng.choice(("folder", "file"))
        db = folder / "s.db"
        db.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        folder.chmod(0o555 if kind == "folder" else 0o777)
        try:
            _case(kit, tally, user, db, counts, kind)
        finally:
            folder.chmod(0o755)
    tally.notes.append(f"as uid {NOBODY} (setpriv)" if user else "as this user (not root)")


def _case(
    kit: Kit, tally: Tally, user: list[str], db: Path, counts: dict[str, int], kind: str
) -> None:
    url = f"sqlite:///{db}"
    session = kit.rng.choice(sorted(counts))
    before = db.read_bytes()
    listed = kit.cli(tally, ["sessions", url, "--json"], user=user)
    shown = {}
    if listed.code == 0:
        shown = {s["session"]: s["events"] for s in json.loads(listed.stdout)["sessions"]}
    if shown != counts:
        tally.fail("wrong", f"{kind}: sessions -> {listed.code} {shown} {listed.stderr[-200:]!r}")
    read = kit.cli(tally, ["log", url, "--session", session, "--json"], user=user)
    if read.code != 0 or json.loads(read.stdout)["events"] != counts[session]:
        tally.fail("wrong", f"{kind}: log -> {read.code} {read.stderr[-200:]!r}")
    write = kit.rng.choice(
        (
            ["tool", url, "task_create", "--session", session, "--args", '{"subject": "x"}'],
            ["todo-write", url, "--session", session, "--args", TODOS],
        )
    )
    done = kit.cli(tally, write, user=user)
    lines = done.stderr.strip().splitlines()
    if done.code != 3 or len(lines) != 1 or str(db) not in lines[0]:
        tally.fail("wrong", f"{kind}: {write[0]} -> {done.code} {done.stderr[-200:]!r}")
    check_bytes(tally, f"{kind}: {write[0]}", before, db.read_bytes(), appended=False)
    store = SqliteStore(db)  # as the runner: the events are the ones written
    try:
        after = {s: store.last_seq(s) for s in counts}
    finally:
        store.close()
    if after != counts:
        tally.fail("doubled", f"{kind}: {write[0]} changed the store: {after} != {counts}")
