"""What every attack class shares: its tally, the command-line runner, the leak and byte checks.

`Kit.cli` runs ``python -m harness ARGS`` in a subprocess with a timeout (or, with
``in_process``, `harness.cli.main` with swapped standard streams, as the tests' `run_cli` does)
and counts a crash (a traceback, an exit status outside 0/1/2/3/130) and a hang (the timeout)
on the class's `Tally`. `Kit.leaks` looks for a secret's forms in texts and in the files under
a folder; `lost_doubled` compares a log's bytes before and after a case.
"""

from __future__ import annotations

import base64
import io
import os
import random
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import asdict, dataclass, field
from pathlib import Path

from compaction import Event, dump_event
from harness.cli import main as cli_main

DOCUMENTED = frozenset({0, 1, 2, 3, 130})
"""The exit statuses docs/cli.md documents for an expected outcome (4 is "unexpected")."""

CLOSED = object()
"""`Kit.cli(stdin=CLOSED)`: run with file descriptor 0 closed."""


@dataclass
class Tally:
    """What one attack class saw."""

    attack: str
    varies: str = ""
    command: str = ""
    cases: int = 0
    crashes: int = 0
    lost: int = 0
    doubled: int = 0
    leaks: int = 0
    hangs: int = 0
    wrong: int = 0
    skipped: str | None = None
    notes: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    """The first few failing cases, to reproduce them."""

    def fail(self, kind: str, case: str, amount: int = 1) -> None:
        """Count `amount` on column `kind` and keep the first examples."""
        setattr(self, kind, getattr(self, kind) + amount)
        if len(self.examples) < 5:
            self.examples.append(f"{kind}: {case[:300]}")

    def as_json(self) -> dict[str, object]:
        """The tally as a JSON object."""
        return asdict(self)


@dataclass
class Outcome:
    """One command's exit status and output."""

    code: int
    stdout: str
    stderr: str
    timed_out: bool = False


@dataclass
class Kit:
    """A class's generator, folders and runner."""

    rng: random.Random
    cases: int
    root: Path
    in_process: bool = False
    postgres_url: str | None = None
    why_no_postgres: str | None = None
    timeout: float = 120.0
    _count: int = 0

    def folder(self) -> Path:
        """A new empty folder for one case."""
        self._count += 1
        path = self.root / f"case-{self._count:04d}"
        path.mkdir()
        return path

    def cli(
        self,
        tally: Tally,
        args: Iterable[str | Path],
        *,
        stdin: str | object = "",
        env: Mapping[str, str] | None = None,
        user: Sequence[str] = (),
    ) -> Outcome:
        """Run `harness ARGS`; count a crash or a hang on `tally`.

        `user` is a command that runs the process as another user (``setpriv ...``): such a
        run is always a subprocess, even with `in_process`.
        """
        argv = [str(a) for a in args]
        done = (
            self._in_process(argv, stdin, env)
            if self.in_process and not user
            else self._sub(argv, stdin, env, user)
        )
        shown = " ".join(repr(a) if (" " in a or not a.isprintable()) else a for a in argv)
        if done.timed_out:
            tally.fail("hangs", f"harness {shown}")
        elif done.code not in DOCUMENTED or "Traceback" in done.stderr:
            tally.fail("crashes", f"harness {shown} -> {done.code}: {done.stderr[-200:]!r}")
        return done

    def _sub(
        self,
        argv: list[str],
        stdin: str | object,
        env: Mapping[str, str] | None,
        user: Sequence[str] = (),
    ) -> Outcome:
        full = {**os.environ, **(env or {})}
        closed = stdin is CLOSED
        try:
            done = subprocess.run(
                [*user, sys.executable, "-m", "harness", *argv],
                input=None if closed else str(stdin),
                stdin=subprocess.PIPE if closed else None,
                preexec_fn=(lambda: os.close(0)) if closed else None,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=self.timeout,
                env=full,
                cwd=self.root,  # not the caller's folder: a stray package there would shadow ours
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
            return Outcome(-9, out, "", timed_out=True)
        return Outcome(done.returncode, done.stdout, done.stderr)

    def _in_process(
        self, argv: list[str], stdin: str | object, env: Mapping[str, str] | None
    ) -> Outcome:
        out, err = io.StringIO(), io.StringIO()
        saved_stdin, saved_env = sys.stdin, dict(os.environ)
        data = "" if stdin is CLOSED else str(stdin)
        fake = io.TextIOWrapper(io.BytesIO(data.encode("utf-8", "surrogatepass")), "utf-8")
        sys.stdin = None if stdin is CLOSED else fake
        os.environ.update(env or {})
        try:
            with redirect_stdout(out), redirect_stderr(err):
                try:
                    code = cli_main(argv)
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 1
                except Exception as exc:  # an escape out of main is the crash counted
                    err.write(f"Traceback (in process): {type(exc).__name__}: {exc}\n")
                    code = 4
        finally:
            sys.stdin = saved_stdin
            fake.close()
            os.environ.clear()
            os.environ.update(saved_env)
        return Outcome(code, out.getvalue(), err.getvalue())


def secret_forms(secret: str) -> set[str]:
    """The secret as shown, in upper, lower and swapped case, and its base64 at 3 alignments."""
    forms = {secret, secret.upper(), secret.lower(), secret.swapcase()}
    raw = secret.encode()
    forms.add(base64.b64encode(raw).decode().rstrip("="))
    forms.add(base64.urlsafe_b64encode(raw).decode().rstrip("="))
    for k in range(3):
        core = base64.b64encode(b"\0" * k + raw).decode()
        forms.add(core[4 if k else 0 : -4])  # the stable middle, whatever comes before it
    return {f for f in forms if len(f) >= 8}


def leaks(secret: str, texts: Iterable[str], folder: Path | None = None) -> list[str]:
    """Where any form of `secret` shows: ``"stdout"``-style labels and file names."""
    forms = secret_forms(secret)
    found = [f"text {i}" for i, t in enumerate(texts) if any(f in t for f in forms)]
    for path in sorted(folder.rglob("*")) if folder is not None else []:
        if path.is_file() and not path.is_symlink():
            text = path.read_bytes().decode("utf-8", "replace")
            if any(f in text for f in forms):
                found.append(str(path.name))
    return found


def lost_doubled(before: bytes, after: bytes, *, appended_ok: bool) -> tuple[int, int]:
    """Bytes of `before` missing from the start of `after`; bytes added when none should be."""
    common = 0
    for a, b in zip(before, after, strict=False):
        if a != b:
            break
        common += 1
    lost = len(before) - common
    extra = max(0, len(after) - common) if lost == 0 else 0
    return lost, 0 if appended_ok else extra


def check_bytes(tally: Tally, case: str, before: bytes, after: bytes, *, appended: bool) -> None:
    """Count lost and doubled bytes of one case's log on `tally`."""
    lost, doubled = lost_doubled(before, after, appended_ok=appended)
    if lost:
        tally.fail("lost", case, lost)
    if doubled:
        tally.fail("doubled", case, doubled)


def read_or_empty(path: Path) -> bytes:
    """A file's bytes, or none when it is not there."""
    return path.read_bytes() if path.is_file() else b""


def canonical(events: Iterable[Event]) -> list[str]:
    """Events as their canonical lines."""
    return [dump_event(e) for e in events]


def missing_bytes(expected: list[str], got: list[str]) -> tuple[int, int]:
    """Bytes of `expected`'s lines not in `got`, and of `got`'s lines beyond or repeated."""
    have = set(got)
    want = set(expected)
    lost = sum(len(x) for x in expected if x not in have)
    extra = sum(len(x) for x in got if x not in want)
    seen: set[str] = set()
    for line in got:
        if line in seen:
            extra += len(line)
        seen.add(line)
    return lost, extra
