"""Nothing heavy at CLI start: each command imports what it uses, and no more.

What a command imports is read from `sys.modules` in a fresh interpreter, never timed: the CPU
figures (``harness --version`` against ``python -c pass``) are in ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import os
import pty
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
from cli_runner import run_cli as run_in_process

import compaction
import prompts
from compaction import Session
from harness.cli import build_parser, version
from harness.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pydantic", "jinja2", "rich", "tiktoken", "tokenizers", "sqlite3", "httpx")
"""Third-party (and standard) packages that cost a visible share of a start."""
COMMAND_HELPERS = {
    "harness.commands.stores",
    "harness.commands.llm_options",
    "harness.commands.backend_options",
    "harness.commands.log_receipts",
    "harness.commands.log_plot",
    "harness.commands.env_options",
    "harness.commands.extras",
}
"""Modules of `harness.commands` that are parts of commands, not commands of their own."""
FAST_PATH = {
    "compaction._lazy",
    "compaction._shadow",
    "compaction.contract",
    "compaction.errors",
    "compaction.stores",
    "compaction.stores._locking",
    "compaction.stores._plain_shapes",
    "compaction.stores.plain_log",
    "compaction.tools",
    "compaction.tools._plain_call",
    "compaction.tools._todo_rules",
    "compaction.tools.arguments",
    "compaction.views",
    "compaction.views._panel_text",
}
"""The standard-library modules of `compaction` the CLI's fast path loads: the contract, the
lazy roots and the prompts check, the JSONL store's plain fold and append, the todo tool's rules,
the panel's words."""

PROBE = textwrap.dedent(
    """
    import io, json, sys
    from harness.cli import main

    sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))
    try:
        status = main(sys.argv[2:])
    except SystemExit as exc:
        status = exc.code
    print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
    """
)

RUN = textwrap.dedent(
    """
    import io, json, sys
    from harness.cli import main

    log, command, stdin = sys.argv[1], sys.argv[2], sys.argv[3]
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    status = main([command, log, *sys.argv[4:]])
    loaded = {m.split(".")[0] for m in sys.modules}
    print(json.dumps({"status": status, "tiktoken": "tiktoken" in loaded,
                      "tokenizers": "tokenizers" in loaded}))
    """
)

WRITE = json.dumps(
    {
        "todos": [
            {"content": "Read the code", "status": "completed"},
            {"content": "Fix the bug", "status": "in_progress"},
        ]
    }
)


MODES_TOML = (
    '[[modes]]\nname = "review"\ntitle = "Review"\nsummary = "code review"\n'
    'blocks = ["core.md.j2"]\ntodo = { forbidden = true }\n'
)
"""A user mode file with one mode, so todo-write must render the modes' refusals."""


def run_cli(log: Path, command: str, *extra: str, stdin: str = "") -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(log), command, stdin, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.fixture
def chat_log(tmp_path: Path) -> Path:
    """A log holding a request and messages, so a usage fold would have text to count."""
    path = tmp_path / "s.jsonl"
    with Session(path) as s:
        s.start_turn("Fix the bug in the parser")
        s.add_message({"role": "assistant", "content": "Looking at the parser now."})
    return path


class TestNoTokenizerUnlessNeeded:
    def test_log_does_load_it(self, chat_log: Path) -> None:
        """Control: `harness log` counts tokens, so the same probe sees tiktoken loaded."""
        assert run_cli(chat_log, "log")["tiktoken"] is True


class TestSessionUsageIsLazy:
    def test_usage_counts_every_event_once_loaded(self, chat_log: Path) -> None:
        """A usage view folded late equals one folded from the start."""
        with Session(chat_log) as late:
            late.add_message({"role": "user", "content": "and the tests"})
            eager = Session(chat_log)
            assert eager.context_tokens > 0
            late_usage = late.usage
        assert late_usage == eager.usage
        assert late_usage.events == 4


def probe(*argv: str, stdin: str = "") -> tuple[object, set[str]]:
    """Run ``harness ARGV`` in a fresh interpreter; return its status and its `sys.modules`."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, stdin, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    return out["status"], set(out["modules"])


def read_all(fd: int) -> bytes:
    """Read a pty's main side until the other side is closed (EIO on Linux), then close it."""
    chunks: list[bytes] = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:
        pass
    finally:
        os.close(fd)
    return b"".join(chunks)


def write_list(log: Path) -> None:
    """Append WRITE's list to `log` with ``harness todo-write``, in this process (set-up only)."""
    done = run_in_process("todo-write", log, stdin=WRITE)
    assert done.returncode == 0, done.stderr


def heavy_in(modules: set[str]) -> set[str]:
    """Return the HEAVY packages among `modules`."""
    return {m.split(".")[0] for m in modules} & set(HEAVY)


def commands_in(modules: set[str]) -> set[str]:
    """Return the command modules (not the shared helpers) among `modules`."""
    return {m for m in modules if m.startswith("harness.commands.")} - COMMAND_HELPERS


def command_imports(module: str) -> set[str]:
    """Return the command modules `module` imports when it loads (a shared helper, say).

    Module-level imports only: one inside a function (what ``run`` needs) loads when the
    command runs, not for ``--help``.
    """
    source = ROOT.joinpath(*module.split(".")).with_suffix(".py").read_text(encoding="utf-8")
    return commands_in(
        {
            node.module
            for node in ast.parse(source).body
            if isinstance(node, ast.ImportFrom) and node.module
        }
    )


class TestCommandImports:
    def test_version_imports_nothing_heavy(self) -> None:
        """`--version` answers before any command, pydantic, rich or importlib.metadata loads."""
        status, modules = probe("--version")
        assert status == 0
        assert heavy_in(modules) == set()
        assert commands_in(modules) == set()
        assert "importlib.metadata" not in modules
        assert {m for m in modules if m.startswith(("compaction.", "prompts."))} == set()

    @pytest.mark.parametrize("extra", [(), ("--json",)])
    def test_todos_imports_no_templates_and_no_tokenizer(
        self, chat_log: Path, extra: tuple[str, ...]
    ) -> None:
        """`todos LOG` loads no jinja2, no tokenizer, no summarizer and no other command."""
        write_list(chat_log)
        status, modules = probe("todos", str(chat_log), *extra)
        assert status == 0
        assert heavy_in(modules) <= {"pydantic", "rich", "sqlite3"}
        assert {"jinja2", "tiktoken", "tokenizers"} & heavy_in(modules) == set()
        assert commands_in(modules) == {COMMANDS["todos"]}
        assert not {m for m in modules if m.startswith(("compaction.summarizers", "prompts"))}

    def test_todos_into_a_pipe_imports_no_pydantic_and_no_rich(self, chat_log: Path) -> None:
        """`todos LOG` into a pipe folds the JSON lines itself: no model, no console, no views."""
        write_list(chat_log)
        status, modules = probe("todos", str(chat_log))
        assert status == 0
        assert heavy_in(modules) == set()
        assert {m for m in modules if m.startswith("compaction.")} <= FAST_PATH
        assert "harness.output" not in modules

    def test_todos_on_a_terminal_imports_no_pydantic_and_no_rich(
        self, chat_log: Path, tmp_path: Path
    ) -> None:
        """`todos LOG` drawn on a terminal (a pty) styles the panel itself: no rich, no model."""
        write_list(chat_log)
        report = tmp_path / "report.json"
        code = (
            "import json, sys\nfrom harness.cli import main\n"
            "status = main(['todos', sys.argv[1]])\nsys.stdout.flush()\n"
            "open(sys.argv[2], 'w').write(json.dumps({'status': status, "
            "'tty': sys.stdout.isatty(), 'modules': sorted(sys.modules)}))"
        )
        styled = ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
        env = {k: v for k, v in os.environ.items() if k not in styled} | {"TERM": "xterm"}
        main_fd, terminal = pty.openpty()
        try:
            subprocess.run(
                [sys.executable, "-c", code, str(chat_log), str(report)],
                stdout=terminal,
                env=env,
                timeout=120,
                check=True,
            )
        finally:
            os.close(terminal)
        drawn = read_all(main_fd)
        result = json.loads(report.read_text(encoding="utf-8"))
        assert (result["status"], result["tty"]) == (0, True)
        modules = set(result["modules"])
        assert heavy_in(modules) == set()
        assert {m for m in modules if m.startswith("compaction.")} <= FAST_PATH
        assert "harness.output" not in modules
        assert b"\x1b[1m1 completed, 1 in progress, 0 pending\x1b[0m" in drawn

    def test_todo_write_imports_no_tokenizer(self, chat_log: Path) -> None:
        """`todo-write` loads no tokenizer, no console, no summarizer, importer or other command."""
        status, modules = probe("todo-write", str(chat_log), stdin=WRITE)
        assert status == 0
        with Session(chat_log) as s:
            assert s.todos.counts()["in_progress"] == 1
        assert {"tiktoken", "tokenizers", "httpx", "rich"} & heavy_in(modules) == set()
        assert commands_in(modules) == {COMMANDS["todo-write"]}
        assert not {
            m for m in modules if m.startswith(("compaction.summarizers", "compaction.importers"))
        }

    @pytest.mark.parametrize("extra", [(), ("--json",), ("--mode", "parallel")])
    def test_todo_write_imports_no_pydantic(self, chat_log: Path, extra: tuple[str, ...]) -> None:
        """An accepted call on a JSONL log is written plainly: no pydantic, no model, no store.

        The log holds a turn and messages; the call is appended (the list is read back).
        """
        status, modules = probe("todo-write", str(chat_log), *extra, stdin=WRITE)
        assert status == 0
        with Session(chat_log) as s:
            assert [t.content for t in s.todos.todos] == ["Read the code", "Fix the bug"]
        assert heavy_in(modules) == set()
        assert {m.split(".")[0] for m in modules} & {"pydantic", "pydantic_core"} == set()
        assert {m for m in modules if m.startswith("compaction.")} <= FAST_PATH

    def test_todo_write_rejected_takes_the_models(self, chat_log: Path) -> None:
        """Control: a call the tool rejects is answered by the tool itself (pydantic loads)."""
        status, modules = probe("todo-write", str(chat_log), stdin='{"todos": [{"id": 1}]}')
        assert status == 1
        assert "pydantic" in heavy_in(modules)

    @pytest.mark.parametrize("mode", [(), ("--mode", "agent"), ("--mode", "plan")])
    def test_todo_write_renders_no_template(self, chat_log: Path, mode: tuple[str, ...]) -> None:
        """Without --modes-file, todo-write reads the shipped policy table: no jinja2, no prompts.

        Also under ``--mode plan``, whose refusal is the table's text, not a rendered template.
        """
        status, modules = probe("todo-write", str(chat_log), *mode, stdin=WRITE)
        assert status == (1 if "plan" in mode else 0)
        assert "jinja2" not in heavy_in(modules)
        assert {m for m in modules if m.split(".")[0] == "prompts"} == set()

    def test_todo_write_with_a_modes_file_renders_them(
        self, chat_log: Path, tmp_path: Path
    ) -> None:
        """Control: a user's modes file is rendered (prompts and jinja2 load), as it must be."""
        modes_file = tmp_path / "modes.toml"
        modes_file.write_text(MODES_TOML, encoding="utf-8")
        status, modules = probe(
            "todo-write", str(chat_log), "--modes-file", str(modes_file), stdin=WRITE
        )
        assert status == 0
        assert "jinja2" in heavy_in(modules)
        assert "prompts.refusals" in modules

    @pytest.mark.parametrize("name", ["bench", "compact", "import", "todos"])
    def test_each_command_imports_only_its_own_module(self, name: str) -> None:
        """`harness NAME --help` imports NAME's module (and those it imports), no other command.

        One dispatch serves every name, so four stand for all: the heaviest (bench), one that
        imports a sibling (compact), one with sub-choices (import) and the lightest (todos).
        """
        status, modules = probe(name, "--help")
        assert status == 0
        assert commands_in(modules) == {COMMANDS[name], *command_imports(COMMANDS[name])}

    @pytest.mark.parametrize("name", sorted(COMMANDS))
    def test_each_module_registers_the_name_it_is_listed_under(self, name: str) -> None:
        """The parser built for one command holds that command alone, under its own name."""
        (action,) = [
            a for a in build_parser(name)._actions if isinstance(a, argparse._SubParsersAction)
        ]
        assert list(action.choices) == [name]

    def test_top_level_help_lists_every_command(self) -> None:
        """`harness --help` (no command named) registers them all, so it can list them."""
        status, modules = probe("--help")
        assert status == 0
        assert commands_in(modules) == set(COMMANDS.values())

    def test_unknown_command_still_lists_the_choices(self) -> None:
        """A name that is no command gets argparse's usage error, with every command listed."""
        done = subprocess.run(
            [sys.executable, "-m", "harness", "no-such-command"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            check=False,
        )
        assert done.returncode == 2
        assert all(f"'{name}'" in done.stderr for name in COMMANDS)


class TestVersion:
    def test_version_equals_the_installed_metadata(self) -> None:
        """The dist-info lookup gives the same version `importlib.metadata` gives."""
        assert version() == metadata.version("context-harness")

    def test_version_reads_the_first_dist_info_on_the_path(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The Version header of the first context_harness dist-info on sys.path is the answer."""
        info = tmp_path / "context_harness-9.8.7.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: context-harness\nVersion: 9.8.7\n\nVersion: 0\n"
        )
        monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
        assert version() == "9.8.7"

    def test_version_without_metadata_says_unknown(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With no dist-info anywhere on sys.path, the version is 'unknown (not installed)'."""
        monkeypatch.setattr(sys, "path", [str(tmp_path)])
        assert version() == "unknown (not installed)"


def type_checking_imports(package: ModuleType) -> dict[str, str]:
    """Return name -> module of the imports under ``if TYPE_CHECKING:`` of a package root."""
    assert package.__file__ is not None
    tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
    (block,) = [node for node in tree.body if isinstance(node, ast.If)]
    return {
        alias.name: node.module or ""
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


@pytest.mark.parametrize("package", [compaction, prompts], ids=lambda p: p.__name__)
class TestLazyRoots:
    def test_import_loads_no_part(self, package: ModuleType) -> None:
        """A bare ``import PACKAGE`` imports none of its modules and nothing heavy."""
        code = f"import json, sys, {package.__name__}\nprint(json.dumps(sorted(sys.modules)))"
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            check=True,
        )
        modules = set(json.loads(done.stdout))
        assert heavy_in(modules) == set()
        # compaction._lazy is the roots' own loader (their __getattr__) and compaction._shadow the
        # check that no user's prompts.py hides the toolkit's: they import nothing else.
        parts = {m for m in modules if m.startswith(f"{package.__name__}.")}
        assert parts - {"compaction._lazy", "compaction._shadow"} == set()

    def test_table_is_the_public_names(self, package: ModuleType) -> None:
        """The name -> module table holds exactly __all__, and the type-only imports agree."""
        table = package._EXPORTS
        assert set(table) == set(package.__all__)
        assert type_checking_imports(package) == table

    def test_every_name_resolves_to_its_module(self, package: ModuleType) -> None:
        """Each public name is the object its module defines (same identity)."""
        for name, module in package._EXPORTS.items():
            assert getattr(package, name) is getattr(importlib.import_module(module), name)

    def test_dir_lists_every_public_name(self, package: ModuleType) -> None:
        """dir(PACKAGE) lists every public name, loaded or not."""
        assert set(package.__all__) <= set(dir(package))

    @pytest.mark.parametrize("name", ["no_such_name", "__wrapped__", "_EXPORT"])
    def test_unknown_name_raises_attribute_error(self, package: ModuleType, name: str) -> None:
        """A name that is not public raises AttributeError naming it (hasattr stays False)."""
        with pytest.raises(AttributeError, match=name):
            getattr(package, name)
        assert not hasattr(package, name)


class TestTodoWriteTable:
    @pytest.mark.parametrize("mode", ["agent", "plan", "nope"])
    def test_shipped_table_answers_as_the_rendered_modes(self, tmp_path: Path, mode: str) -> None:
        """An allowed mode, a refusing one and an unknown one: the same bytes and status either way.

        With a modes file, todo-write renders every refusal from the templates (`prompts`); without
        one it reads `compaction/schemas/mode_policies.json`. The plan refusal, the accepted
        results and the unknown-mode error must not tell them apart.
        """
        modes_file = tmp_path / "modes.toml"
        modes_file.write_text(MODES_TOML, encoding="utf-8")
        outputs: list[tuple[int, str, str]] = []
        for extra in ((), ("--modes-file", str(modes_file))):
            log = tmp_path / f"s{len(outputs)}.jsonl"
            done = subprocess.run(
                [sys.executable, "-m", "harness", "todo-write", str(log), "--mode", mode, *extra],
                input=WRITE,
                capture_output=True,
                text=True,
                cwd=ROOT,
                timeout=120,
                check=False,
            )
            outputs.append((done.returncode, done.stdout, done.stderr.replace(", review", "")))
        assert outputs[0] == outputs[1]
        assert outputs[0][0] == {"plan": 1, "nope": 2}.get(mode, 0)
