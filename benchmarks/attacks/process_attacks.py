"""Attacks with other processes: a copy killed mid-way, compaction under concurrent writers.

`copy_sigkill` starts `harness copy` of a 6,000-message session, SIGKILLs it at a random point
after it started writing, and checks that the destination holds the whole session or none of it,
then that a rerun completes it event for event. `concurrent_compaction` compacts while three
writer processes append and rewrite the list, per backend, and counts landed / attempted.
"""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from benchmarks.attacks.attack_kit import Kit, Tally, canonical, missing_bytes
from compaction import (
    CheckpointRecorded,
    CompactionError,
    Event,
    HarnessError,
    Message,
    Session,
    TodoWritten,
    check_log,
    compact,
    open_store,
    read_events,
)

SOURCE_MESSAGES = 6000
"""The copied session's size: a copy of it takes long enough to be killed part-way."""


def _source(kit: Kit) -> Path:
    """The session every SIGKILL case copies (written once per run of the class).

    A run of fewer than 5 cases (the smoke test) copies a tenth of it: the check is the same,
    the kill may land after the copy finished.
    """
    path = kit.root / "big.jsonl"
    size = SOURCE_MESSAGES if kit.cases >= 5 else SOURCE_MESSAGES // 10
    if not path.exists():
        with Session(path) as session:
            session.start_turn("Fix it", mode="agent")
            session.append_many(
                [Message(role="assistant", content=f"step {i}") for i in range(size)]
            )
    return path


def _started(dst: str, folder: Path, name: str) -> bool:
    """Tell whether the copy has begun writing (its part file, or staging rows in SQLite)."""
    if dst.startswith("jsonl:"):
        return (folder / "out" / f".{name}.jsonl.part").exists()
    if dst.startswith("sqlite:"):
        db = folder / "o.db"
        if not db.exists():
            return False
        try:
            con = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=0.01)
            try:
                row = con.execute(
                    "SELECT count(*) FROM events WHERE session = ?", (f"{name}.copy-staging",)
                ).fetchone()
            finally:
                con.close()
        except sqlite3.Error:
            return False
        return bool(row and row[0])
    return True  # PostgreSQL: killed after the random delay alone


def _destinations(kit: Kit, folder: Path) -> list[str]:
    dsts = [f"jsonl:///{folder / 'out'}", f"sqlite:///{folder / 'o.db'}"]
    return dsts + ([kit.postgres_url] if kit.postgres_url else [])


def _kill_mid_copy(kit: Kit, src: Path, dst: str, folder: Path, name: str) -> bool:
    """Run the copy and SIGKILL it; True when it was still running when killed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "copy", str(src), dst, "--as", name],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + kit.timeout
    while proc.poll() is None and not _started(dst, folder, name) and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(kit.rng.uniform(0.0, 0.6))
    running = proc.poll() is None
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    return running


def copy_sigkill(kit: Kit, tally: Tally, folder: Path) -> None:
    """One copy killed mid-way; then a rerun: the whole session or none, never a part."""
    src = _source(kit)
    expected = canonical(read_events(src))
    dsts = _destinations(kit, folder)
    dst = dsts[kit.rng.randrange(len(dsts))]
    name = f"big-{folder.name}"
    killed = _kill_mid_copy(kit, src, dst, folder, name)
    store = open_store(dst)
    after_kill = store.last_seq(name)
    store.close()
    if after_kill not in (0, len(expected)):
        tally.fail("wrong", f"{dst.split(':')[0]}: {after_kill} of {len(expected)} events left")
    rerun = kit.cli(tally, ["copy", src, dst, "--as", name])
    if rerun.code != 0 and "already holds" not in rerun.stderr:
        tally.fail("wrong", f"rerun after the kill refused: {rerun.stderr[-200:]!r}")
    store = open_store(dst)
    try:
        lost, doubled = missing_bytes(expected, canonical(store.read(name)))
        store.delete(name) if dst == kit.postgres_url else None
    finally:
        store.close()
    if lost:
        tally.fail("lost", f"copy into {dst.split(':')[0]} killed", lost)
    if doubled:
        tally.fail("doubled", f"copy into {dst.split(':')[0]} killed", doubled)
    tally.notes.append(f"{dst.split(':')[0]}: {'killed running' if killed else 'had finished'}")


WRITER = textwrap.dedent(
    """
    import json, sys
    from compaction import Session
    url, w, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with Session.open(url, session="busy", sync="batch") as s:
        for i in range(n):
            s.add_message({"role": "user", "content": f"w{w} step {i} " + "x " * 40})
            items = [{"content": f"w{w} task {i}", "status": "in_progress"}]
            s.todo_write(json.dumps({"todos": items}), allow_parallel_in_progress=True)
    """
)


def _round(kit: Kit, tally: Tally, url: str, steps: int, refused: Counter[str]) -> tuple[int, int]:
    """Compact while 3 writers run; return (attempted, landed); count losses and crashes.

    An attempt is made every 50 ms (not in a tight loop, so that an attempt finds new events);
    each refusal's code is counted in `refused`.
    """
    with Session.open(url, session="busy") as s:
        s.start_turn("Keep going", mode="agent")
        for i in range(20):
            s.add_message({"role": "assistant", "content": f"setup {i} " + "y " * 60})
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, url, str(w), str(steps)]) for w in range(3)
    ]
    attempted = landed = 0
    with Session.open(url, session="busy") as s:
        while any(p.poll() is None for p in procs) or attempted < 3:
            attempted += 1
            try:
                compact(s, force=True)
                landed += 1
            except CompactionError as exc:
                refused[exc.code] += 1
                # A JSONL log's lock is not held through a summary (`Session.in_store`), so
                # there writers that win every attempt make a documented `conflict` (retry):
                # counted beside the landings, not as wrong. In a SQL store it must land.
                expected = ("nothing_to_compact", "no_safe_cut") + (
                    () if s.in_store else ("conflict",)
                )
                if exc.code not in expected:
                    tally.fail("wrong", f"compaction refused: {exc.code}")
            time.sleep(0.05)
        for p in procs:
            try:
                if p.wait(timeout=kit.timeout) != 0:
                    tally.fail("crashes", f"writer exit {p.returncode}")
            except subprocess.TimeoutExpired:
                p.kill()
                tally.fail("hangs", "writer past its timeout")
        events = list(s.events())
    _check_round(tally, events, steps)
    return attempted, landed


def _check_round(tally: Tally, events: Sequence[Event], steps: int) -> None:
    try:
        check_log(events)
    except HarnessError as exc:
        tally.fail("wrong", f"log invalid after the round: {exc}")
    wanted = [f"w{w} step {i} " + "x " * 40 for w in range(3) for i in range(steps)]
    got = [getattr(getattr(e, "data", None), "content", None) for e in events]
    lost, doubled = missing_bytes(wanted, [g for g in got if isinstance(g, str) and g[:1] == "w"])
    if lost:
        tally.fail("lost", "a writer's acknowledged message missing", lost)
    if doubled:
        tally.fail("doubled", "a writer's message written twice", doubled)
    lists = [e for e in events if isinstance(e, TodoWritten)]
    for cp in (e for e in events if isinstance(e, CheckpointRecorded)):
        before = [e for e in lists if e.seq < cp.seq]
        expected = tuple(t.content for t in before[-1].data.todos) if before else ()
        if cp.data.current != expected:
            tally.fail("wrong", f"checkpoint {cp.seq} carries another list")


def concurrent_compaction(kit: Kit, tally: Tally) -> None:
    """Per backend, ``max(1, cases // 10)`` rounds: landed / attempted, nothing lost."""
    rounds = max(1, kit.cases // 10)
    steps = 10 if kit.cases < 10 else 40
    backends = {"jsonl": None, "sqlite": None, "postgresql": kit.postgres_url}
    for backend, server in backends.items():
        if backend == "postgresql" and server is None:
            tally.skipped = f"postgresql ({kit.why_no_postgres})"
            continue
        attempted = landed = 0
        refused: Counter[str] = Counter()
        for _ in range(rounds):
            folder = kit.folder()
            url = {"jsonl": f"jsonl:///{folder}", "sqlite": f"sqlite:///{folder / 's.db'}"}.get(
                backend, server or ""
            )
            if backend == "postgresql":
                store = open_store(url)
                store.delete("busy")
                store.close()
            a, n = _round(kit, tally, url, steps, refused)
            attempted, landed = attempted + a, landed + n
        tally.cases += attempted
        why = ", ".join(f"{n} {code}" for code, n in sorted(refused.items()))
        tally.notes.append(f"{backend}: landed {landed}/{attempted}" + (f" ({why})" if why else ""))
