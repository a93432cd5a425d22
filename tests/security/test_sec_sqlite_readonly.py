"""Issue 25, case 11: a SQLite store in a read-only folder is read, and a write to it refused.

The other read-only tests make SQLite refuse the writes from inside the process (root ignores
file permissions). These run the real command line in a subprocess that the permissions bind:
as an unprivileged user (uid 65534) when the tests run as root, as the test's own user
otherwise. The store's file is 0444 and its folder 0555, so SQLite can create neither a
journal nor the WAL's ``-shm`` file beside it.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from benchmarks.attacks.readonly_sqlite import NOBODY, unprivileged
from compaction import Session
from compaction.stores import SqliteStore

ROOT = Path(__file__).resolve().parents[2]


def _harness(prefix: Sequence[str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m harness ARGS`` from this checkout under `prefix`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
        check=False,
        timeout=120,
    )


@pytest.fixture(scope="module")
def prefix() -> list[str]:
    """The prefix, checked once: the unprivileged user can start this checkout's Python."""
    found = unprivileged()
    if found is None:
        pytest.skip("running as root without setpriv or runuser: cannot drop root's powers")
    probe = subprocess.run(
        [*found, sys.executable, "-c", "import harness"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"},
        cwd="/",
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"uid {NOBODY} cannot run this checkout's Python: {probe.stderr.strip()}")
    return found


@pytest.fixture
def read_only_store() -> Iterator[Path]:
    """A one-session store (5 events) whose file is 0444 in a 0555 folder others can reach."""
    top = Path(tempfile.mkdtemp(prefix="ro-sqlite-"))
    top.chmod(0o755)  # mkdtemp makes it 0700: the unprivileged user must reach the folder
    folder = top / "ro"
    folder.mkdir()
    store = SqliteStore(folder / "s.db")
    with Session(store=store, session="s1") as session:
        session.start_turn("Fix it", mode="agent")
        for i in range(3):
            session.task_create({"subject": f"task {i}"})
    store.close()
    assert sorted(p.name for p in folder.iterdir()) == ["s.db"]  # the WAL was checkpointed
    (folder / "s.db").chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    folder.chmod(0o555)
    try:
        yield folder / "s.db"
    finally:
        folder.chmod(0o755)
        shutil.rmtree(top)


def test_a_read_only_store_is_read_by_sessions_and_log(
    prefix: list[str], read_only_store: Path
) -> None:
    """`harness sessions` and `harness log` read a store its user cannot write (exit 0)."""
    url = f"sqlite:///{read_only_store}"
    listed = _harness(prefix, "sessions", url, "--json")
    assert listed.returncode == 0, listed.stderr
    assert [(s["session"], s["events"]) for s in json.loads(listed.stdout)["sessions"]] == [
        ("s1", 5)
    ]
    log = _harness(prefix, "log", url, "--session", "s1", "--json")
    assert log.returncode == 0, log.stderr
    summary = json.loads(log.stdout)
    assert (summary["events"], summary["lines"]) == (5, 5)
    assert sorted(p.name for p in read_only_store.parent.iterdir()) == ["s.db"]


def test_a_write_to_a_read_only_store_is_one_line_exit_3(
    prefix: list[str], read_only_store: Path
) -> None:
    """A write is refused in one line naming the file, exit 3 (I/O); nothing changes."""
    url = f"sqlite:///{read_only_store}"
    before = read_only_store.read_bytes()
    done = _harness(
        prefix, "tool", url, "task_create", "--session", "s1", "--args", '{"subject": "x"}'
    )
    assert done.returncode == 3, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert str(read_only_store) in lines[0]
    assert "Traceback" not in done.stderr
    assert read_only_store.read_bytes() == before
    assert sorted(p.name for p in read_only_store.parent.iterdir()) == ["s.db"]
    after = _harness(prefix, "log", url, "--session", "s1", "--json")
    assert json.loads(after.stdout)["events"] == 5
