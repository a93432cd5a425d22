"""The Windows lock of `compaction.stores.locking`, in process, with a fake ``msvcrt``.

`tests/unit/test_locking.py` runs the whole Windows path in a child process (no ``fcntl``);
mutmut sees no coverage there, so these tests call `lock_exclusive` and `unlock` here with the
module's ``fcntl`` removed and ``msvcrt`` replaced by a recorder: which byte is locked, in which
mode, how a refused lock is retried and a refused unlock raised, and the file position kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction.stores import locking

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
