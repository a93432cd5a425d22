"""Section 5: clear errors, never tracebacks.

One line naming the file and the cause; exit 3 for I/O errors (2 stays for usage errors).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import Session
from harness.cli import EXIT_CODES, main

EVENT = '{"v": 1, "seq": 1, "type": "turn/start", "data": {}}\n'
TODOS = json.dumps({"todos": [{"content": "a", "status": "pending"}]})
COMMANDS: dict[str, list[str]] = {
    "todos": ["todos", "LOG"],
    "log": ["log", "LOG"],
    "compact": ["compact", "LOG", "--force"],
    "context": ["context", "LOG"],
    "todo-write": ["todo-write", "LOG", "--args", TODOS],
    "sessions": ["sessions", "LOG"],
}


def _bad_path(kind: str, tmp_path: Path) -> tuple[Path, str]:
    """Return a path of the given kind, and the cause the error line must state."""
    match kind:
        case "directory":
            path = tmp_path / "adir"
            path.mkdir()
            return path, "is a directory"
        case "fifo":
            path = tmp_path / "fifo"
            os.mkfifo(path)
            return path, "not a regular file"
        case "dangling":
            path = tmp_path / "dangling"
            path.symlink_to(tmp_path / "nothing-here")
            return path, "dangling symlink"
        case "under-a-file":
            (tmp_path / "file.txt").write_text("x")
            return tmp_path / "file.txt" / "log.jsonl", "a parent of this path is a file"
        case _:
            raise AssertionError(kind)


def _run(argv: list[str], log: Path) -> list[str]:
    return [str(log) if a == "LOG" else a for a in argv]


@pytest.mark.parametrize("kind", ["directory", "fifo", "dangling", "under-a-file"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_log_path_is_one_line(
    command: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory, FIFO, dangling symlink or path under a file: one line, exit 3, no hang."""
    path, cause = _bad_path(kind, tmp_path)
    status = main(_run(COMMANDS[command], path))
    out, err = capsys.readouterr()
    assert status == 3
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"harness {command}: {path}: ")
    assert cause in err
    assert not (tmp_path / "nothing-here").exists()  # nothing written through the link


@pytest.mark.parametrize("command", ["todos", "compact", "log", "context"])
def test_missing_log_fails(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reading commands on a missing file fail (todos and compact used to exit 0)."""
    path = tmp_path / "missing.jsonl"
    status = main(_run(COMMANDS[command], path))
    _, err = capsys.readouterr()
    assert status == 3
    assert err == f"harness {command}: {path}: no such session log\n"
    assert not path.exists()


@pytest.mark.parametrize("content", [b"hello\n", bytes(range(256)) * 200, b'{"a": 1}\n'])
def test_log_on_a_file_that_is_not_a_log(
    content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`harness log` on text, binary or stray JSON says the file is not a session log."""
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    status = main(["log", str(path)])
    _, err = capsys.readouterr()
    assert status == 2
    assert err.startswith(f"harness log: {path} is not a session log: ")
    assert err.count("\n") == 1
    assert path.read_bytes() == content


def _harness(
    *args: str,
    preexec: Callable[[], object] | None = None,
    stdin: int | None = subprocess.DEVNULL,
) -> subprocess.CompletedProcess[str]:
    # A size-limited process writes no bytecode: a cache file it wrote would be cut at the limit
    # (a 53-byte ``__main__`` pyc), and every later ``python -m harness`` would fail reading it.
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"} if preexec is not None else None
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=stdin is not None,
        stdin=stdin,
        text=True,
        timeout=120,
        preexec_fn=preexec,
        check=False,
        env=env,
    )


def _fsize_limit(size: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return apply


def test_file_size_limit_on_append(tmp_path: Path) -> None:
    """A log that cannot grow (RLIMIT_FSIZE, as a read-only file would be) is one line, exit 3."""
    log = tmp_path / "s.jsonl"
    log.write_text(EVENT)
    before = log.read_bytes()
    result = _harness("todo-write", str(log), "--args", TODOS, preexec=_fsize_limit(len(before)))
    assert result.returncode == 3
    assert result.stderr.startswith(f"harness todo-write: {log}: ")
    assert "File too large" in result.stderr
    assert result.stderr.count("\n") == 1
    assert log.read_bytes() == before


@pytest.mark.parametrize("where", ["directory", "under-a-file", "size-limit"])
def test_import_output_unwritable(where: str, tmp_path: Path) -> None:
    """`import -o` into a directory, under a file, or past a size limit: one line, exit 3."""
    source = Path(__file__).parents[1] / "fixtures" / "transcripts" / "codex_small.jsonl"
    if where == "size-limit":  # a limit of the process: a process of its own
        out = tmp_path / "new.jsonl"
        result = _harness("import", "auto", str(source), "-o", str(out), preexec=_fsize_limit(100))
    else:  # in this process (see cli_runner)
        out, _ = _bad_path(where, tmp_path)
        result = run_cli("import", "auto", source, "-o", out)
    assert result.returncode == 3
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr
    assert str(out.name) in result.stderr or str(out) in result.stderr


def test_stdin_closed(tmp_path: Path) -> None:
    """`harness todo-write LOG <&-`: one line, exit 3, nothing appended."""
    log = tmp_path / "s.jsonl"
    result = _harness("todo-write", str(log), preexec=lambda: os.close(0), stdin=subprocess.PIPE)
    assert result.returncode == 3
    assert "stdin is closed" in (result.stderr or "")
    assert not log.exists() or log.read_text() == ""


def test_stdout_closed(tmp_path: Path) -> None:
    """`harness prompt >&-`: one line on stderr, exit 3."""
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "prompt"],
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.close(1),
        check=False,
    )
    assert proc.returncode == 3
    assert proc.stderr == "harness: stdout is closed; nothing could be printed\n"


def test_broken_pipe(tmp_path: Path) -> None:
    """`harness context LOG | head -c 10`: quiet (issue 39: nothing on stderr), exit 3."""
    log = tmp_path / "big.jsonl"
    with Session(log) as s:
        s.start_turn("x")
        for _ in range(40):
            s.add_message({"role": "assistant", "content": "word " * 2000})
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "context", str(log), "--format", "text"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    head = proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 3
    assert head == b"You are a "
    assert err == ""


def test_unexpected_error_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bug still prints one line (exit 4); HARNESS_DEBUG=1 shows the traceback."""

    def boom(args: object) -> int:
        raise RuntimeError("a bug\nwith two lines")

    monkeypatch.setattr("harness.commands.prompt_cmd.run", boom)
    monkeypatch.delenv("HARNESS_DEBUG", raising=False)
    assert main(["prompt"]) == 4
    assert (
        capsys.readouterr().err
        == "harness prompt: unexpected error: RuntimeError: a bug with two lines\n"
    )
    monkeypatch.setenv("HARNESS_DEBUG", "1")
    with pytest.raises(RuntimeError):
        main(["prompt"])


def test_exit_codes_are_documented() -> None:
    """Every exit status is listed in the README's table."""
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    for code, meaning in EXIT_CODES.items():
        assert f"| {code} | {meaning} |" in readme
