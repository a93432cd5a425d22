"""``HARNESS_*`` variables give the common options their defaults; a bad one is one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import Session, TodoItem, TodoWriteData
from harness.cli import build_parser
from harness.commands.backend_options import _base_url
from harness.commands.env_options import ENVIRONMENT, openai_base_url


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No variable of the table leaks in from the shell running the tests."""
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)


def parsed(*argv: str) -> object:
    return build_parser(argv[0]).parse_args(list(argv))


class TestDefaults:
    @pytest.mark.parametrize(
        ("argv", "unset"),
        [
            (("compact", "s.jsonl"), 128_000),
            (("log", "s.jsonl"), 128_000),
            (("demo",), None),
        ],
    )
    def test_window(self, monkeypatch: pytest.MonkeyPatch, argv: tuple[str], unset: object) -> None:
        """HARNESS_WINDOW sets --window's default; the command line still wins."""
        before = vars(parsed(*argv))["window"]
        monkeypatch.setenv("HARNESS_WINDOW", "4321")
        assert vars(parsed(*argv))["window"] == 4321
        assert vars(parsed(*argv, "--window", "99"))["window"] == 99
        assert before == unset

    @pytest.mark.parametrize("command", ["compact", "log", "import", "modes"])
    def test_tokenizer(self, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
        """HARNESS_TOKENIZER sets --tokenizer's default for every command that counts tokens."""
        argv = {"import": ("import", "auto", "t.jsonl", "-o", "s.jsonl"), "modes": ("modes",)}
        args = argv.get(command, (command, "s.jsonl"))
        assert vars(parsed(*args))["tokenizer"] == "o200k_base"
        monkeypatch.setenv("HARNESS_TOKENIZER", "cl100k_base")
        assert vars(parsed(*args))["tokenizer"] == "cl100k_base"

    def test_an_empty_variable_is_unset(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """An empty HARNESS_WINDOW leaves the option's own default."""
        monkeypatch.setenv("HARNESS_WINDOW", " ")
        assert vars(parsed("compact", "s.jsonl"))["window"] == 128_000

    def test_store_is_the_log_left_out(self, tmp_path: Path) -> None:
        """HARNESS_STORE names the log `harness todos` reads when LOG is left out."""
        log = tmp_path / "s.jsonl"
        with Session(log) as s:
            s.append(TodoWriteData(todos=(TodoItem(content="Ship it", status="pending"),)))
        done = run_cli("todos", env={"HARNESS_STORE": str(log)})
        assert (done.returncode, done.stdout) == (
            0,
            "0 completed, 0 in progress, 1 pending\n○ Ship it\n",
        )
        assert run_cli("todos").returncode == 2  # without it, LOG is required

    def test_openai_base_url(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """OPENAI_BASE_URL is the OpenAI endpoints' default, never the Anthropic one's."""
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        assert openai_base_url(None) == "http://127.0.0.1:9/v1"
        assert openai_base_url("http://other/v1") == "http://other/v1"
        assert _base_url(None, "openai-responses") == "http://127.0.0.1:9/v1"
        assert _base_url(None, "anthropic") != "http://127.0.0.1:9/v1"
        monkeypatch.delenv("OPENAI_BASE_URL")
        assert openai_base_url(None) is None


class TestBadValues:
    @pytest.mark.parametrize(
        ("name", "value", "argv", "reason"),
        [
            ("HARNESS_WINDOW", "abc", ("compact", "s.jsonl"), "expected an integer, not 'abc'"),
            ("HARNESS_WINDOW", "0", ("demo", "--help"), "must be at least 1, not 0"),
            (
                "HARNESS_TOKENIZER",
                "gpt2",
                ("log", "s.jsonl"),
                "expected one of o200k_base, cl100k_base, deepseek",
            ),
        ],
    )
    def test_one_line_exit_2(
        self, name: str, value: str, argv: tuple[str, ...], reason: str
    ) -> None:
        """A value the option refuses: one stderr line naming the variable, exit 2."""
        done = run_cli(*argv, env={name: value})
        assert done.returncode == 2
        assert done.stdout == ""
        assert done.stderr == f"harness: {name}={value!r}: {reason}; fix it or unset it\n"


def test_help_lists_the_variables() -> None:
    """`harness --help` lists every variable; an option's help names its own."""
    top = run_cli("--help").stdout
    for name in ENVIRONMENT:
        assert f"\n  {name} " in top
    assert "HARNESS_WINDOW" in run_cli("compact", "--help").stdout
    assert "HARNESS_TOKENIZER" in run_cli("import", "--help").stdout
    assert "HARNESS_STORE" in run_cli("todos", "--help").stdout
    assert "OPENAI_BASE_URL" in run_cli("compact", "--help").stdout
