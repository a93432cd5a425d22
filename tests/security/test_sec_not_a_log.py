"""Issue 25, case 13: `harness compact` and `harness log` refuse a file that is not a log alike.

Both say it through one helper (`harness.commands.stores.not_a_log`): what the file holds
instead, then what a session log is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli

from harness.commands.stores import not_a_log

TAIL = "(a session log holds one JSON event a line; see harness log --schema)"


def test_the_message_names_the_file_the_reason_and_what_a_log_is() -> None:
    """The helper's text: the file, why, and the same closing sentence for every caller."""
    assert str(not_a_log("x.jsonl", "line 1: not JSON")) == (
        f"x.jsonl is not a session log: line 1: not JSON {TAIL}"
    )


@pytest.mark.parametrize("command", ["compact", "log"])
def test_a_text_file_is_refused_in_the_same_words_by_both_commands(
    tmp_path: Path, command: str
) -> None:
    """A text file: one line, exit 2, the same reason from `compact` and `log`."""
    path = tmp_path / "notes.txt"
    path.write_text("hello\nworld\n", encoding="utf-8")
    before = path.read_bytes()
    done = run_cli(command, path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == [
        f"harness {command}: {path} is not a session log: line 1: not JSON: expected value at "
        f"line 1 column 1 {TAIL}"
    ]
    assert path.read_bytes() == before
