r"""Every ```python and ```console block of README.md, CONTRIBUTING.md and docs/*.md runs.

A document's blocks run in order, in one fresh temporary folder (so a block may use the files
an earlier one wrote), offline:

- a ```python block is executed; the blocks of one document share one namespace, like a
  reader pasting them into one interpreter;
- a ```console block holds ``$ harness ...`` lines, each run as ``python -m harness ...``
  would run it, in this process (``tests/cli_runner.py``: an interpreter start per line cost more
  than most commands), split like a shell would, no shell features (a line ending in ``\`` goes
  on on the next), each followed by the output it must print.
  The output is compared line by line (trailing spaces ignored): a line ``...`` stands for any
  number of lines. A command must exit 0, unless the block's output ends with ``[exit N]``. A
  block that shows no output only has to succeed. Any other command (``pip``, ``cd``) fails the
  block: mark it as not runnable instead.

To mark a block as not runnable (it needs a server, a key, a checkout's benchmarks), put an
HTML comment on the line before its fence, saying why::

    <!-- not-run: needs a PostgreSQL server -->

Other fences (```bash, ```json, ```text, ```toml) are never run.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[1]

FENCE = re.compile(r"^```(\w*)\s*$")
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.+?)\s*-->\s*$")
EXIT = re.compile(r"^\[exit (\d+)\]$")
ANY = "..."
"""An expected-output line that matches any number of lines."""

PENDING: dict[str, str] = {}
"""Documents whose blocks are known not to run yet, with the reason; each entry is a debt."""


@dataclass(frozen=True)
class Block:
    """One fenced block of a document."""

    lang: str
    """``python`` or ``console``."""
    line: int
    """The line of its opening fence (1-based)."""
    text: str
    """Its content."""
    skip: str | None
    """Why it is not run, from a ``<!-- not-run: ... -->`` comment before it."""


def blocks_of(markdown: str) -> list[Block]:
    """Return the ```python and ```console blocks of a document, in order.

    Raises:
        ValueError: a fence is never closed.
    """
    found: list[Block] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        start, lang = i, match.group(1)
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise ValueError(f"line {start + 1}: a ``` fence is never closed")
        if lang in ("python", "console"):
            before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
            marked = NOT_RUN.match(before.strip())
            text = "\n".join(lines[start + 1 : end])
            found.append(Block(lang, start + 1, text, marked.group(1) if marked else None))
        i = end + 1
    return found


def commands_of(block: str) -> list[tuple[str, list[str]]]:
    """Split a console block into (command, expected output lines), one per ``$`` line.

    Raises:
        ValueError: the block does not open with a ``$`` line.
    """
    out: list[tuple[str, list[str]]] = []
    for raw in block.splitlines():
        if out and out[-1][0].endswith("\\") and not out[-1][1]:
            out[-1] = (out[-1][0][:-1] + " " + raw.strip(), [])
        elif raw.startswith("$ "):
            out.append((raw[2:].strip(), []))
        elif not out:
            raise ValueError(f"a console block opens with {raw!r}, not a '$ ' command")
        else:
            out[-1][1].append(raw.rstrip())
    return out


def matches(expected: list[str], actual: list[str]) -> bool:
    """Tell whether `actual` lines match `expected`, where a ``...`` line matches any run."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == ANY:
        return any(matches(rest, actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and actual[0] == head and matches(rest, actual[1:])


def run_console(block: Block, folder: Path) -> list[str]:
    """Run a console block's commands in `folder`; return one line per mismatch."""
    problems = []
    for command, expected in commands_of(block.text):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            problems.append(f"{command!r}: {exc}")
            continue
        if not argv or argv[0] != "harness":
            problems.append(f"{command!r}: only '$ harness ...' lines run; mark the block not-run")
            continue
        want_status = 0
        if expected and (status := EXIT.match(expected[-1])):
            want_status, expected = int(status.group(1)), expected[:-1]
        # In this process (tests/cli_runner.py: `main` with argv, environment, cwd, stdin and
        # output swapped), as `python -m harness` would run it, without an interpreter start.
        done = run_cli(*argv[1:], env=offline_env(folder), cwd=folder)
        actual = [line.rstrip() for line in (done.stdout + done.stderr).splitlines()]
        if done.returncode != want_status:
            problems.append(f"{command!r}: exit {done.returncode}, not {want_status}: {actual}")
        elif expected and not matches(expected, actual):
            problems.append(f"{command!r} printed {actual}, not {expected}")
    return problems


def offline_env(folder: Path) -> dict[str, str]:
    """The environment commands run in: the caller's, with no proxy, keys or user config."""
    env = {
        k: v
        for k, v in os.environ.items()
        if "PROXY" not in k.upper() and not k.upper().endswith(("_KEY", "_TOKEN"))
    }
    env.update({"HOME": str(folder), "NO_COLOR": "1", "COLUMNS": "100", "PYTHONPATH": str(ROOT)})
    return env


def run_python(block: Block, namespace: dict[str, object]) -> list[str]:
    """Execute a python block in `namespace` (stdout captured); return its error, if any."""
    try:
        code = compile(block.text, f"<block at line {block.line}>", "exec")
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, namespace)
    except Exception as exc:
        return [f"{type(exc).__name__}: {exc}"]
    return []


def run_document(path: Path, folder: Path) -> list[str]:
    """Run every runnable block of a document in order in `folder`; return the failures."""
    failures = []
    namespace: dict[str, object] = {"__name__": "__doc_block__"}
    blocks = blocks_of(path.read_text(encoding="utf-8"))
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        for block in blocks:
            if block.skip is not None:
                continue
            if block.lang == "python":
                problems = run_python(block, namespace)
            else:
                problems = run_console(block, folder)
            failures += [f"{path.name}:{block.line}: {p}" for p in problems]
    finally:
        os.chdir(cwd)
    return failures


def documents() -> list[Path]:
    """README.md, CONTRIBUTING.md and every docs/*.md that exists."""
    paths = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [p for p in paths if p.is_file()]


@pytest.mark.slow
@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_block_runs(path: Path, tmp_path: Path) -> None:
    """Each python and console block of the document runs as shown, in order."""
    if path.name in PENDING:
        pytest.skip(PENDING[path.name])
    assert run_document(path, tmp_path) == []


class TestRunner:
    """The runner itself: it finds blocks, honours markers and fails what fails."""

    def test_blocks_and_markers(self) -> None:
        """Only python and console fences are blocks; a not-run comment marks the next one."""
        doc = (
            "x\n```python\na = 1\n```\n<!-- not-run: needs a server -->\n\n```console\n"
            "$ harness x\n```\n```json\n{}\n```\n"
        )
        got = blocks_of(doc)
        assert [(b.lang, b.line, b.text, b.skip) for b in got] == [
            ("python", 2, "a = 1", None),
            ("console", 7, "$ harness x", "needs a server"),
        ]

    @pytest.mark.parametrize(
        ("doc", "match"),
        [("```python\nx = 1\n", "never closed"), ("```console\noops\n```\n", "not a '\\$ '")],
    )
    def test_malformed_documents_are_refused(self, doc: str, match: str) -> None:
        """An unclosed fence or a console block without a command is an error, not a pass."""
        with pytest.raises(ValueError, match=match):
            _ = [commands_of(block.text) for block in blocks_of(doc)]

    def test_a_command_goes_on_after_a_backslash(self) -> None:
        """A $ line ending in a backslash continues on the next line; output follows."""
        block = "$ harness compact s.jsonl \\\n    --force\nreplaced\n$ harness log s.jsonl"
        assert commands_of(block) == [
            ("harness compact s.jsonl  --force", ["replaced"]),
            ("harness log s.jsonl", []),
        ]

    @pytest.mark.parametrize(
        ("expected", "actual", "ok"),
        [
            (["a", "b"], ["a", "b"], True),
            (["a"], ["a", "b"], False),
            (["a", "...", "d"], ["a", "b", "c", "d"], True),
            (["a", "...", "d"], ["a", "d"], True),
            (["...", "z"], ["a", "b"], False),
        ],
    )
    def test_output_matching(self, expected: list[str], actual: list[str], ok: bool) -> None:
        """Lines match exactly; ``...`` matches any run of lines."""
        assert matches(expected, actual) is ok

    def test_failures_are_reported_with_their_line(self, tmp_path: Path) -> None:
        """A failing python block, a wrong output and a non-harness command all fail."""
        doc = tmp_path / "bad.md"
        doc.write_text(
            "```python\nraise RuntimeError('boom')\n```\n\n"
            "```console\n$ harness modes --help-me\n[exit 0]\n```\n\n"
            "```console\n$ pip install x\n```\n"
            "<!-- not-run: planted -->\n```python\nraise SystemExit\n```\n"
        )
        failures = run_document(doc, tmp_path)
        assert len(failures) == 3
        assert failures[0].startswith("bad.md:1: RuntimeError: boom")
        assert failures[1].startswith("bad.md:5: 'harness modes --help-me': exit 2, not 0")
        assert "only '$ harness ...' lines run" in failures[2]

    def test_a_passing_document(self, tmp_path: Path) -> None:
        """Blocks share a namespace and a folder; matching output and [exit N] pass."""
        doc = tmp_path / "good.md"
        doc.write_text(
            "```python\nfrom pathlib import Path\nPath('x.txt').write_text('hi')\n```\n"
            "```python\nassert Path('x.txt').read_text() == 'hi'\n```\n"
            "```console\n$ harness log\nharness log: give a LOG to summarise, or --schema\n"
            "[exit 2]\n```\n"
        )
        assert run_document(doc, tmp_path) == []
