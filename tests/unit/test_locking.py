"""File locking: flock on POSIX, msvcrt.locking on Windows (simulated here with a fake module)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from compaction import Session

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
    from compaction.stores import locking as lk

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
