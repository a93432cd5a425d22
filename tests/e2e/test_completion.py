"""`harness completion bash|zsh|fish`: scripts generated from the parser, checked by the shells."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from cli_runner import run_cli

from harness.cli import build_parser
from harness.commands import COMMANDS
from harness.commands.completion_cmd import read_commands


def script(shell: str) -> str:
    done = run_cli("completion", shell)
    assert done.returncode == 0, done.stderr
    return done.stdout


def complete(tmp_path: Path, *words: str) -> list[str]:
    """Run the bash completion function on `words` (the last is being typed)."""
    path = tmp_path / "harness.bash"
    path.write_text(script("bash"), encoding="utf-8")
    quoted = " ".join(f"'{w}'" for w in words)
    code = (
        f"source {path}; COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _harness; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(
        ["bash", "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=True
    )
    return done.stdout.split()


class TestBash:
    def test_sources_cleanly(self, tmp_path: Path) -> None:
        """`bash -n` finds no syntax error, and sourcing it registers the function."""
        path = tmp_path / "harness.bash"
        path.write_text(script("bash"), encoding="utf-8")
        subprocess.run(["bash", "-n", str(path)], check=True, timeout=60)
        done = subprocess.run(
            ["bash", "-c", f"source {path} && complete -p harness"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert done.stdout.strip() == "complete -o default -F _harness harness"

    def test_lists_every_command(self, tmp_path: Path) -> None:
        """After `harness`, every command of the parser is offered, in its order."""
        assert complete(tmp_path, "harness", "") == [*COMMANDS, "--help", "--version"]
        assert complete(tmp_path, "harness", "to") == ["todo-write", "todos", "tool"]

    def test_options_and_choices_of_a_command(self, tmp_path: Path) -> None:
        """A command's options after `-`, an option's choices after it, files otherwise."""
        todos = {c.name: c for c in read_commands(build_parser())}["todos"]
        flags = [f for o in todos.options for f in o.flags]
        assert complete(tmp_path, "harness", "todos", "s.jsonl", "-") == flags
        assert complete(tmp_path, "harness", "compact", "s.jsonl", "--tokenizer", "") == [
            "o200k_base",
            "cl100k_base",
            "deepseek",
        ]
        (tmp_path / "session.jsonl").touch()
        assert complete(tmp_path, "harness", "todos", "sess") == ["session.jsonl"]


def test_zsh_loads_the_same_function() -> None:
    """The zsh script is the bash function behind bashcompinit (zsh -n checks it if present)."""
    text = script("zsh")
    assert "autoload -U +X bashcompinit && bashcompinit\n" in text
    assert text.endswith(script("bash"))
    if shutil.which("zsh"):
        subprocess.run(["zsh", "-n", "-c", text], check=True, timeout=60)


def test_fish_has_a_line_per_command_and_option() -> None:
    """Each command is offered after `harness`; each option under its command."""
    text = script("fish")
    commands = read_commands(build_parser())
    for command in commands:
        assert f"-n __fish_use_subcommand -a {command.name} " in text
    assert "-n '__fish_seen_subcommand_from compact' -l tokenizer -x -a 'o200k_base" in text
    options = sum(len(c.options) for c in commands)
    assert len(text.splitlines()) == 2 + len(commands) + options
    if shutil.which("fish"):
        subprocess.run(["fish", "-n", "-c", text], check=True, timeout=60)


def test_the_same_bytes_every_run_and_a_bad_shell_refused() -> None:
    """Deterministic output; an unknown shell is a usage error (exit 2)."""
    assert script("bash") == script("bash")
    done = run_cli("completion", "tcsh")
    assert done.returncode == 2
    assert "invalid choice: 'tcsh'" in done.stderr


def test_read_commands_follows_the_parser() -> None:
    """The commands read are the parser's: names in order, each option's flags and choices."""
    from compaction.tokens import TOKENIZER_NAMES

    commands = {c.name: c for c in read_commands(build_parser())}
    assert list(commands) == list(COMMANDS)
    tokenizer = [o for o in commands["compact"].options if o.flags == ("--tokenizer",)]
    assert [o.choices for o in tokenizer] == [TOKENIZER_NAMES]
    assert all(o.takes_value for o in tokenizer)
    json_flag = [o for o in commands["todos"].options if o.flags == ("--json",)]
    assert [o.takes_value for o in json_flag] == [False]
