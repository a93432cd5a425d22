"""File locking: flock on POSIX, msvcrt.locking on Windows (simulated here with a fake module)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction import Session
from compaction.stores import _locking as locking

WINDOWS_RUN = textwrap.dedent(
    """
    import json, os, sys, types

    sys.modules["fcntl"] = None  # as on Windows: `import fcntl` raises ImportError
    calls = []
    failures = {"left": 2}

    def locking(fd, mode, nbytes):
        calls.append([mode, os.lseek(fd, 0, os.SEEK_CUR), nbytes])
        if mode == fake.LK_LOCK and failures["left"]:
            failures["left"] -= 1
            raise OSError(36, "Resource deadlock avoided")  # LK_LOCK gave up after 10 tries

    fake = types.ModuleType("msvcrt")
    fake.LK_UNLCK, fake.LK_LOCK = 0, 1
    fake.locking = locking
    sys.modules["msvcrt"] = fake

    import compaction
    from compaction.stores import _locking as lk

    with compaction.Session(sys.argv[1]) as s:
        s.append(compaction.TurnStartData())
        with s.batch():
            s.add_message({"role": "user", "content": "hello"})
            s.add_message({"role": "assistant", "content": "hi"})
    print(json.dumps({"calls": calls, "offset": lk.LOCK_OFFSET, "fcntl": lk.fcntl is None}))
    """
)


class TestWindowsLocking:
    def test_core_imports_and_appends_without_fcntl(self, tmp_path: Path) -> None:
        """Without fcntl, compaction imports and locks each append through msvcrt, retrying."""
        log = tmp_path / "s.jsonl"
        done = subprocess.run(
            [sys.executable, "-c", WINDOWS_RUN, str(log)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout.splitlines()[-1])
        assert out["fcntl"] is True
        modes = [mode for mode, _, _ in out["calls"]]
        # One append, then one batch: each lock retried twice in all, each released once.
        assert modes == [1, 1, 1, 0, 1, 0]
        assert {(offset, n) for _, offset, n in out["calls"]} == {(out["offset"], 1)}
        assert [json.loads(line)["seq"] for line in log.read_text().splitlines()] == [1, 2, 3]

    def test_posix_appends_under_flock(self, tmp_path: Path) -> None:
        """With fcntl (this machine), appends lock through flock and land in order."""
        log = tmp_path / "s.jsonl"
        with Session(log) as s:
            for i in range(3):
                s.add_message({"role": "user", "content": f"m{i}"})
        assert [json.loads(line)["seq"] for line in log.read_text().splitlines()] == [1, 2, 3]


# Pinned by mutation testing (folded in from tests/unit/compaction/stores/test_locking.py):
# The Windows lock of `compaction.stores._locking`, in process, with a fake ``msvcrt``.
#
# The tests above run the whole Windows path in a child process (no ``fcntl``);
# mutmut sees no coverage there, so these tests call `lock_exclusive` and `unlock` here with the
# module's ``fcntl`` removed and ``msvcrt`` replaced by a recorder: which byte is locked, in which
# mode, how a refused lock is retried and a refused unlock raised, and the file position kept.


LK_UNLCK, LK_LOCK = 0, 1


class FakeMsvcrt:
    """Records each ``locking(fd, mode, nbytes)`` call with the fd's position at the time."""

    LK_UNLCK = LK_UNLCK
    LK_LOCK = LK_LOCK

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, int]] = []
        self.refusals = 0
        """How many of the next calls raise OSError (as LK_LOCK does after ten tries)."""

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        self.calls.append((mode, os.lseek(fd, 0, os.SEEK_CUR), nbytes))
        if self.refusals:
            self.refusals -= 1
            raise OSError(36, "Resource deadlock avoided")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeMsvcrt:
    """The module as on Windows: no fcntl, msvcrt the recorder."""
    recorder = FakeMsvcrt()
    monkeypatch.setattr(locking, "fcntl", None)
    monkeypatch.setattr(locking, "msvcrt", recorder)
    return recorder


@pytest.fixture
def fd(tmp_path: Path) -> Iterator[int]:
    """A file of 10 bytes, open, positioned at byte 7."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDWR)
    os.lseek(fd, 7, os.SEEK_SET)
    yield fd
    os.close(fd)


def position(fd: int) -> int:
    return os.lseek(fd, 0, os.SEEK_CUR)


def test_a_lock_is_one_byte_at_the_lock_offset(fake: FakeMsvcrt, fd: int) -> None:
    """Locking and unlocking each lock the byte at LOCK_OFFSET, and leave the position."""
    locking.lock_exclusive(fd)
    assert fake.calls == [(LK_LOCK, locking.LOCK_OFFSET, 1)]
    assert position(fd) == 7
    locking.unlock(fd)
    assert fake.calls[1:] == [(LK_UNLCK, locking.LOCK_OFFSET, 1)]
    assert position(fd) == 7


def test_a_refused_lock_is_asked_again_until_granted(fake: FakeMsvcrt, fd: int) -> None:
    """LK_LOCK gives up after ten tries: the writer keeps asking, as flock would wait."""
    fake.refusals = 3
    locking.lock_exclusive(fd)
    assert fake.calls == [(LK_LOCK, locking.LOCK_OFFSET, 1)] * 4
    assert position(fd) == 7


def test_a_refused_unlock_raises_at_once(fake: FakeMsvcrt, fd: int) -> None:
    """An unlock that fails is not retried: the error reaches the caller, the position kept."""
    fake.refusals = 1
    with pytest.raises(OSError, match="Resource deadlock avoided"):
        locking.unlock(fd)
    assert fake.calls == [(LK_UNLCK, locking.LOCK_OFFSET, 1)]
    assert position(fd) == 7


def test_an_open_file_is_locked_through_its_descriptor(fake: FakeMsvcrt, tmp_path: Path) -> None:
    """A file object works as its fd does, and its position is kept."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"0123456789")
    with path.open("rb+") as fh:
        fh.seek(3)
        locking.lock_exclusive(fh)
        locking.unlock(fh)
        assert fh.tell() == 3
    assert [(mode, n) for mode, _, n in fake.calls] == [(LK_LOCK, 1), (LK_UNLCK, 1)]
    assert {offset for _, offset, _ in fake.calls} == {locking.LOCK_OFFSET}


def test_posix_locks_the_file_for_other_open_files(tmp_path: Path) -> None:
    """With fcntl, the lock excludes another open of the file until it is released."""
    fcntl = pytest.importorskip("fcntl")
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"x")
    with path.open("rb+") as mine, path.open("rb") as other:
        locking.lock_exclusive(mine)
        with pytest.raises(BlockingIOError):
            fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        locking.unlock(mine.fileno())
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(other.fileno(), fcntl.LOCK_UN)
