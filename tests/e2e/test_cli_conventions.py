"""CLI conventions: --version, examples in every --help, --json means JSON, progress, CLI words."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
from importlib import metadata
from pathlib import Path

import pytest
from cli_runner import run_cli
from rich.console import Console

from harness.cli import build_parser
from harness.output import LARGE_BYTES, cli_text, progress

ROOT = Path(__file__).resolve().parents[2]
ONE = json.dumps({"todos": [{"content": "Run tests", "status": "in_progress"}]})


def harness(*args: str | Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `harness ARGS` in-process from the checkout's root (see cli_runner)."""
    return run_cli(*args, stdin=stdin, cwd=ROOT)


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


class TestVersionAndHelp:
    def test_version(self):
        """`harness --version` prints the installed distribution's version."""
        out = harness("--version")
        assert out.returncode == 0
        assert out.stdout.strip() == f"harness {metadata.version('context-harness')}"

    @pytest.mark.parametrize("name", sorted(subcommands()))
    def test_every_help_has_an_example(self, name):
        """Every command's --help ends with examples that run that very command."""
        text = subcommands()[name].format_help()
        examples = text.split("examples:\n", 1)[1].splitlines()
        assert examples
        assert all(line.startswith("  ") for line in examples)
        assert any(f"harness {name}" in line for line in examples)

    def test_top_level_help_has_examples(self):
        """`harness --help` shows examples too."""
        assert "examples:\n  harness demo" in build_parser().format_help()

    @pytest.mark.parametrize("name", ["compact", "context"])
    def test_mode_help_states_the_real_default(self, name):
        """--mode of a log command defaults to the log's latest turn mode, and says so."""
        text = " ".join(subcommands()[name].format_help().split())
        assert "the mode (default: the mode of the log's latest turn/start that names one" in text

    def test_prompt_mode_default(self):
        """`harness prompt --mode` defaults to agent, and says so."""
        text = " ".join(subcommands()["prompt"].format_help().split())
        assert "the mode (default: agent)" in text


class TestJson:
    def test_todo_write_args_and_json(self, tmp_path):
        """--args takes the call's arguments; --json prints the result as JSON."""
        log = tmp_path / "s.jsonl"
        out = harness("todo-write", log, "--args", ONE, "--json")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == {
            "is_error": False,
            "content": "Todo list updated: 0 pending, 1 in progress, 0 completed.",
            "todos": [{"content": "Run tests", "status": "in_progress"}],
        }

    def test_todo_write_stdin_kept(self, tmp_path):
        """Arguments on stdin still work, with or without --json."""
        out = harness("todo-write", tmp_path / "s.jsonl", stdin=ONE)
        assert out.stdout == "Todo list updated: 0 pending, 1 in progress, 0 completed.\n"

    def test_todo_write_rejection_as_json(self, tmp_path):
        """A rejected call gives is_error true in JSON, exit 1."""
        out = harness("todo-write", tmp_path / "s.jsonl", "--json", stdin='{"todos": 3}')
        assert out.returncode == 1
        assert json.loads(out.stdout)["is_error"] is True

    def test_old_json_args_form_refused(self, tmp_path):
        """`--json ARGS` (the old spelling) is no longer arguments: a usage error, nothing run."""
        log = tmp_path / "s.jsonl"
        out = harness("todo-write", log, "--json", ONE)
        assert out.returncode == 2
        assert not log.exists()

    @pytest.mark.parametrize(
        "args",
        [
            ("todos", "{log}", "--json"),
            ("log", "{log}", "--json"),
            ("compact", "{log}", "--json"),
            ("context", "{log}", "--format", "text", "--json"),
            ("prompt", "--mode", "plan", "--json"),
            ("modes", "--json"),
            ("demo", "--turns", "2", "--json"),
        ],
    )
    def test_json_everywhere(self, tmp_path, args):
        """Every command's --json prints one JSON document on stdout."""
        log = tmp_path / "s.jsonl"
        assert harness("todo-write", log, "--args", ONE).returncode == 0
        out = harness(*(a.format(log=log) for a in args))
        assert out.returncode == 0, out.stderr
        assert isinstance(json.loads(out.stdout), dict)

    def test_demo_json_figures(self):
        """`harness demo --json` gives the run's settings and figures."""
        data = json.loads(harness("demo", "--turns", "3", "--seed", "2", "--json").stdout)
        assert (data["turns"], data["seed"]) == (3, 2)
        assert set(data["cache_hit_rates"]["ours"]) == {"deepseek", "openai", "anthropic", "vllm"}


class TestProgress:
    def test_drawn_on_a_terminal(self):
        """On a terminal the bar is drawn with its description."""
        buffer = io.StringIO()
        stream = Console(file=buffer, force_terminal=True, width=80)
        with progress("importing big.jsonl", 10, stream=stream) as update:
            update(5)
        assert "importing big.jsonl" in buffer.getvalue()

    def test_quiet_when_not_a_terminal(self):
        """Not a terminal: nothing is drawn at all."""
        buffer = io.StringIO()
        stream = Console(file=buffer, force_terminal=False)
        with progress("importing big.jsonl", 10, stream=stream) as update:
            update(5)
        assert buffer.getvalue() == ""

    def test_small_work_draws_nothing(self):
        """show=False (a small file) draws nothing even on a terminal."""
        buffer = io.StringIO()
        stream = Console(file=buffer, force_terminal=True)
        with progress("x", 1, show=False, stream=stream) as update:
            update(1)
        assert buffer.getvalue() == ""

    @pytest.mark.transcripts
    def test_large_import_and_log_quiet_in_a_pipe(self, transcripts, tmp_path):
        """Importing and reading a large file through a pipe: stderr holds no progress line."""
        big = transcripts / "claude-code_entire-cli_cd95adddad32_3compactions.jsonl"
        assert big.stat().st_size >= LARGE_BYTES
        out = tmp_path / "s.jsonl"
        run = harness("import", "auto", big, "-o", out)
        assert (run.returncode, run.stderr) == (0, "")
        run = harness("log", out)
        assert (run.returncode, run.stderr) == (0, "")


class TestCliWords:
    def test_below_threshold_says_force_flag(self, tmp_path):
        """The refusal below the threshold names --force, not force=True."""
        log = tmp_path / "s.jsonl"
        harness("todo-write", log, "--args", ONE)
        out = harness("compact", log)
        assert "force it with --force" in out.stdout
        assert "force=True" not in out.stdout + out.stderr

    def test_bad_line_says_skip_bad(self, tmp_path):
        """A malformed line names --skip-bad, not skip_bad_lines=True."""
        log = tmp_path / "s.jsonl"
        assert harness("todo-write", log, "--args", ONE).returncode == 0
        with log.open("a", encoding="utf-8") as fh:
            fh.write("not json\n")
        out = harness("log", log)
        assert out.returncode == 2
        assert "run again with --skip-bad" in out.stderr
        assert "skip_bad_lines" not in out.stderr

    @pytest.mark.parametrize(
        ("option", "value", "said"),
        [
            ("--window", "0", "--window must be a positive integer, not 0"),
            ("--threshold", "2", "--threshold must be in (0, 1], not 2.0"),
            ("--reserve", "-1", "--reserve must be an integer in [0, --window), not -1"),
        ],
    )
    def test_policy_errors_name_options(self, tmp_path, option, value, said):
        """A bad compact option is named as the option, not the Python field."""
        out = harness("compact", tmp_path / "s.jsonl", option, value)
        assert out.returncode == 2
        assert out.stderr.strip() == f"harness compact: {said}"

    def test_demo_bad_turns_is_a_usage_error(self):
        """`harness demo --turns 0` is one usage line, not a traceback."""
        out = harness("demo", "--turns", "0")
        assert out.returncode == 2
        assert "Traceback" not in out.stderr
        assert "--turns: must be at least 1" in out.stderr

    def test_cli_text_only_rewrites_whole_names(self):
        """Option names replace whole words only (window_tokens, not a longer word)."""
        assert cli_text(
            "window_tokens must be; my_window_tokens", {"window_tokens": "--window"}
        ) == ("--window must be; my_window_tokens")


class TestBenchOut:
    def test_default_out_is_the_checkouts_results(self):
        """`harness bench` writes to the checkout's benchmarks/results/ by default."""
        from harness.commands.bench_cmd import load_suite

        assert Path(load_suite(ROOT).DEFAULT_OUT) == ROOT / "benchmarks" / "results"

    def test_help_names_out(self):
        """--out's help says where the default is."""
        text = " ".join(subcommands()["bench"].format_help().split())
        assert "default: the checkout's benchmarks/results/ for a full run" in text
        assert "a fresh temporary folder for --quick" in text

    @pytest.mark.parametrize(
        ("quick", "report_only", "out", "where"),
        [
            (False, False, None, "default"),
            (False, True, None, "default"),
            (True, True, None, "default"),
            (True, False, "given", "given"),
            (False, False, "given", "given"),
            (True, False, None, "fresh"),
        ],
    )
    def test_output_folder(self, tmp_path, quick, report_only, out, where):
        """Only a quick run without --out gets a fresh folder; it is never the default one."""
        from harness.commands.bench_cmd import output_folder

        default, given = tmp_path / "results", tmp_path / "given"
        args = argparse.Namespace(quick=quick, report_only=report_only, out=given if out else None)
        got = output_folder(args, default)
        if where == "fresh":
            assert got.is_dir()
            assert not any(got.iterdir())
            assert got.name.startswith("harness-bench-quick-")
            assert got != default
            got.rmdir()
        else:
            assert got == {"default": default, "given": given}[where]
