"""Issue 39, item 9: no quiet wrong answers from the command line.

A read never creates a store: a store that is not there is "no such store", a session it does
not hold "no session ID", both exit 3 with nothing written. A transcript given where a log is
expected names the import command. A closed pipe is quiet. Each exit status is the README's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction.stores import SqliteStore

READS = [
    ["todos", "{url}", "--session", "s1"],
    ["log", "{url}", "--session", "s1"],
    ["context", "{url}", "--session", "s1"],
    ["tasks", "{url}", "--session", "s1"],
    ["sessions", "{url}"],
    ["copy", "{url}", "jsonl:///{out}", "--session", "s1"],
]


def _argv(words: list[str], url: str, tmp_path: Path) -> list[str]:
    return [w.format(url=url, out=tmp_path / "out") for w in words]


@pytest.mark.parametrize("words", READS, ids=[w[0] for w in READS])
@pytest.mark.parametrize("kind", ["sqlite", "jsonl"])
def test_a_read_of_a_missing_store_creates_nothing(
    words: list[str], kind: str, tmp_path: Path
) -> None:
    """`sqlite:///missing.db` and `jsonl:///no/such/folder`: "no such store", exit 3, no file."""
    target = tmp_path / ("missing.db" if kind == "sqlite" else "no/such/folder")
    done = run_cli(*_argv(words, f"{kind}:///{target}", tmp_path))
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "no such store" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "0 sessions" not in done.stdout
    assert "0 completed" not in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("words", [w for w in READS if w[0] != "sessions"], ids=str)
def test_a_read_of_a_missing_session_says_so(words: list[str], tmp_path: Path) -> None:
    """A store that holds no session `s1`: "no session 's1'", exit 3, the store unchanged."""
    path = tmp_path / "s.db"
    SqliteStore(path).close()
    before = path.read_bytes()
    done = run_cli(*_argv(words, f"sqlite:///{path}", tmp_path))
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "no session 's1'" in done.stderr
    assert path.read_bytes() == before
    assert not (tmp_path / "out").exists()


def test_a_foreign_sqlite_file_is_not_a_store_and_gains_no_table(tmp_path: Path) -> None:
    """An SQLite file of another application: "no such store", and no events table is added."""
    import sqlite3

    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    done = run_cli("todos", f"sqlite:///{path}", "--session", "s1")
    assert done.returncode == 3
    assert "no such store" in done.stderr
    db = sqlite3.connect(path)
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master")]
    db.close()
    assert names == ["t"]


def test_a_write_still_creates_its_store(tmp_path: Path) -> None:
    """`todo-write` to a new SQLite store creates it (writes are not reads)."""
    url = f"sqlite:///{tmp_path / 'new.db'}"
    done = run_cli("todo-write", url, "--session", "s1", "--args", '{"todos": []}')
    assert done.returncode == 0, done.stderr
    assert run_cli("todos", url, "--session", "s1").returncode == 0
