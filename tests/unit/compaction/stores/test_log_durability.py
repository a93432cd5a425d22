"""Durability of the log against real processes: SIGKILL mid-append, and concurrent writers.

A helper process imports the toolkit once and forks the writers, so each round costs a fork
rather than an interpreter start. Writers report each seq on stdout only after `append`
returned; the test kills them with SIGKILL and then checks the file.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from compaction import Message, SessionLog, read_events
from compaction.stores import ReadReport

pytestmark = pytest.mark.slow

HELPER = textwrap.dedent(
    r"""
    import os, sys
    from compaction.events import Message
    from compaction.stores.log_writer import SessionLog

    def say(line):
        os.write(1, (line + "\n").encode())

    def writer(path, seed):
        # Appends until killed. Every third event is up to 2 MB, so a kill can land inside its
        # write; odd rounds skip the fsync (a killed process loses no page-cache data, and
        # more kills then land in a write rather than in an fsync).
        log = SessionLog(path, sync="batch" if seed % 2 else "always")
        n = 0
        while True:
            n += 1
            size = (seed * 7919 + n * 104729) % 2_000_000 if n % 3 == 0 else 40
            event = log.append(Message(role="user", content=f"r{seed} n{n} " + "x" * size))
            say(f"seq {event.seq}")

    def concurrent(path, workers, count):
        go_r, go_w = os.pipe()
        pids = []
        for w in range(workers):
            pid = os.fork()
            if pid == 0:
                os.close(go_w)
                os.read(go_r, 1)
                log = SessionLog(path)
                for i in range(count):
                    log.append(Message(role="user", content=f"w{w} i{i}"))
                log.close()
                os._exit(0)
            pids.append(pid)
        os.write(go_w, b"x" * workers)
        codes = [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids]
        say("codes " + " ".join(map(str, codes)))

    mode, path = sys.argv[1], sys.argv[2]
    if mode == "kill":
        for line in sys.stdin:
            seed = int(line)
            # The writer waits until its pid is printed, so "pid" always comes before "seq".
            go_r, go_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(go_w)
                os.read(go_r, 1)
                writer(path, seed)
            os.close(go_r)
            say(f"pid {pid}")
            try:
                os.write(go_w, b"x")
            except BrokenPipeError:
                pass  # the test killed the writer before it began (a round of 0 appends)
            os.close(go_w)
            os.waitpid(pid, 0)
            say("end")
    else:
        concurrent(path, int(sys.argv[3]), int(sys.argv[4]))
    """
)


def helper(*args: str, stdin: int | None = None) -> subprocess.Popen[bytes]:
    """Start the helper process."""
    return subprocess.Popen(
        [sys.executable, "-c", HELPER, *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def next_line(proc: subprocess.Popen[bytes]) -> str:
    """Read one line the helper or a writer printed; fail if the helper died."""
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if not line:
        assert proc.stderr is not None
        raise AssertionError(f"helper ended early: {proc.stderr.read().decode()[-2000:]}")
    return line.strip()


def grown_past(path: Path, extra: int) -> None:
    """Return as soon as the file is `extra` bytes longer than now (polling, no sleeping)."""
    size = path.stat().st_size if path.exists() else 0
    deadline = time.monotonic() + 60
    while (path.stat().st_size if path.exists() else 0) < size + extra:
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} stopped growing")


class TestSigkill:
    def test_killed_writers_lose_only_what_never_returned(self, log_path: Path) -> None:
        """30 writers SIGKILLed at random points lose nothing that returned, at most a torn tail."""
        rng = random.Random(20261130)
        returned: list[int] = []
        torn: list[int] = []
        with helper("kill", str(log_path), stdin=subprocess.PIPE) as proc:
            assert proc.stdin is not None
            try:
                self._rounds(proc, log_path, rng, returned, torn)
            except BaseException:
                proc.kill()  # its writer, if still running, dies with the pipe
                raise
        assert len(returned) == len(set(returned))
        assert len(returned) >= 30

        with SessionLog(log_path) as log:
            after = log.append(Message(role="user", content="after the crashes"))
        report = ReadReport(path=str(log_path))
        events = list(read_events(log_path, report=report))
        assert report.torn_line is None
        assert after.seq == len(events) == events[-1].seq
        print(f"{len(returned)} returned appends, {len(events)} events, {len(torn)} torn tails")

    @staticmethod
    def _rounds(
        proc: subprocess.Popen[bytes],
        log_path: Path,
        rng: random.Random,
        returned: list[int],
        torn: list[int],
    ) -> None:
        """Run 30 rounds: start a writer, read some of its seqs, SIGKILL it, check the file."""
        assert proc.stdin is not None
        for round_ in range(30):
            proc.stdin.write(f"{round_}\n".encode())
            proc.stdin.flush()
            pid = int(next_line(proc).removeprefix("pid "))
            if round_ % 2:
                # Kill right after the writer reports some appends: it is between two.
                for _ in range(rng.randint(0, 12)):
                    returned.append(int(next_line(proc).removeprefix("seq ")))
            else:
                # Kill once the file grew past a random size: often inside a large write.
                grown_past(log_path, rng.randint(1, 3_000_000))
            os.kill(pid, signal.SIGKILL)
            while (line := next_line(proc)) != "end":
                returned.append(int(line.removeprefix("seq ")))

            report = ReadReport(path=str(log_path))
            seqs = (
                [e.seq for e in read_events(log_path, report=report)] if log_path.exists() else []
            )
            assert seqs == list(range(1, len(seqs) + 1))
            assert set(returned) <= set(seqs), "an append that returned was lost"
            assert report.bad_lines == []
            if report.torn_line is not None:
                torn.append(round_)
                assert report.torn_line == report.lines == len(seqs) + 1


class TestConcurrentWriters:
    def test_four_processes_append_at_once(self, log_path: Path) -> None:
        """4 processes x 200 appends: each event exactly once, seqs 1..800, every line valid."""
        workers, count = 4, 200
        with helper("concurrent", str(log_path), str(workers), str(count)) as proc:
            out, err = proc.communicate(timeout=120)
        assert out.decode().split() == ["codes", *["0"] * workers], err.decode()[-2000:]

        lines = log_path.read_bytes().split(b"\n")
        assert lines[-1] == b""
        assert all(json.loads(line)["v"] == 1 for line in lines[:-1])
        events = list(read_events(log_path))
        assert [e.seq for e in events] == list(range(1, workers * count + 1))
        contents = [e.data.text() for e in events if isinstance(e.data, Message)]
        assert Counter(contents) == Counter(
            f"w{w} i{i}" for w in range(workers) for i in range(count)
        )
        for w in range(workers):
            mine = [int(c.split("i")[1]) for c in contents if c.startswith(f"w{w} ")]
            assert mine == list(range(count)), "a writer's own appends are in its order"
