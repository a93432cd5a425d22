"""`harness compact` through the command line, on a generated 120-turn session.

120 turns make a log of about 970,000 tokens, over seven default windows: every compaction
below replaces most of it, as the 500-turn session (3.2M tokens) did at a quarter of the cost.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from loop_sessions import reads, todos

from compaction import (
    SECTION_NAMES,
    CheckpointRecorded,
    Session,
    TodoItem,
    check_log,
    parse_checkpoint,
    read_events,
)
from compaction.policy import DEFAULT_WINDOW
from harness.simulation import generate
from harness.simulation._sessions import unfinished

TURNS = 120


def harness(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run `harness ARGS` in-process (see cli_runner)."""
    return run_cli(*args)


def compact_json(*args: str | Path) -> dict[str, Any]:
    run = harness("compact", *args, "--json")
    assert run.returncode == 0, run.stderr
    result: dict[str, Any] = json.loads(run.stdout)
    return result


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[TodoItem, ...]]:
    """A 120-turn synthetic session log and the unfinished items of its latest list."""
    payloads = generate(TURNS, seed=3)
    path = tmp_path_factory.mktemp("e2e") / "s500.jsonl"
    with Session(path, sync="batch") as session, session.batch():
        session.append_many(payloads)
    return path, unfinished(payloads)


@pytest.mark.slow
class TestCompactCommand:
    def test_compacts_a_120_turn_session(
        self, generated: tuple[Path, tuple[TodoItem, ...]]
    ) -> None:
        """Below threshold, dry run, compaction and re-compaction all keep every open task."""
        path, open_items = generated
        pending = [t.content for t in open_items if t.status == "pending"]
        current = [t.content for t in open_items if t.status == "in_progress"]
        assert pending, "the generator ends with pending work"
        assert current, "the generator ends with work in progress"
        size = path.stat().st_size

        below = compact_json(path, "--window", "100000000")
        assert below["compacted"] is False
        assert below["reason"] == "below_threshold"
        assert path.stat().st_size == size

        dry = compact_json(path, "--dry-run")
        assert dry["dry_run"] is True
        assert path.stat().st_size == size
        assert dry["tokens_before"] > 7 * DEFAULT_WINDOW
        assert dry["tokens_after"] <= 0.25 * dry["tokens_before"]
        assert dry["pending"] == pending
        assert dry["current"] == current

        first = compact_json(path)
        assert {k: v for k, v in first.items() if k not in ("dry_run", "compacted", "seq")} == {
            k: v for k, v in dry.items() if k not in ("dry_run", "compacted", "seq")
        }
        second = compact_json(path, "--force")
        assert second["first_seq"] == first["last_seq"] + 1
        assert second["tokens_before"] == first["tokens_after"]
        assert second["pending"] == pending
        assert second["current"] == current

        events = list(read_events(path))
        check_log(events)
        checkpoints = [e for e in events if isinstance(e, CheckpointRecorded)]
        assert [c.seq for c in checkpoints] == [first["seq"], second["seq"]]
        for c in checkpoints:
            parsed = parse_checkpoint(c.data.text)
            assert list(parsed.pending_jobs) == pending
            assert list(parsed.current_work) == current
            heads = [ln[3:] for ln in c.data.text.split("\n") if ln.startswith("## ")]
            assert heads == list(SECTION_NAMES)

    def test_human_output(self, tmp_path: Path) -> None:
        """Without --json the command reports the span, the tokens and the tasks carried."""
        path = tmp_path / "small.jsonl"
        with Session(path, sync="batch") as session, session.batch():
            session.append_many(generate(3, seed=1))
        run = harness("compact", path, "--force", "--dry-run")
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("# Checkpoint\n\n## Primary Request and Intent\n")
        assert "would replace seqs 1.." in run.stdout
        assert "[dry run: nothing appended]" in run.stdout
        assert "carried by code: " in run.stdout
        below = harness("compact", path)
        assert below.returncode == 0
        assert below.stdout.startswith("nothing to do: the request holds ")

    @pytest.mark.parametrize(
        ("args", "match"),
        [
            (("--threshold", "1.5"), "threshold must be in"),
            (("--retain", "0.9"), r"retain \(0.9\)"),
            (("--window", "0"), "--window must be a positive integer"),
            (("--boundary", "0.95"), r"--boundary must be in \(0, --threshold=0.9\]"),
            (("--boundary", "half"), "'half' is not a share, 'auto' or 'none'"),
        ],
    )
    def test_bad_policy_exits_2(self, tmp_path: Path, args: tuple[str, ...], match: str) -> None:
        """A bad policy value is named on stderr with exit status 2."""
        path = tmp_path / "s.jsonl"
        path.write_text("")
        run = harness("compact", path, *args)
        assert run.returncode == 2
        assert re.search(match, run.stderr), run.stderr


def test_instructions_reach_the_checkpoint_and_the_event(tmp_path: Path) -> None:
    """`--instructions TEXT` is summarized under Critical Context and recorded in the event."""
    path = tmp_path / "small.jsonl"
    with Session(path, sync="batch") as session, session.batch():
        session.append_many(generate(3, seed=1))
    out = compact_json(path, "--force", "--instructions", "keep the API decisions")
    assert out["instructions"] == "keep the API decisions"
    parsed = parse_checkpoint(out["checkpoint"])
    assert "- Focus asked for at this compaction: keep the API decisions" in (
        parsed.critical_context
    )
    events = [e for e in read_events(path) if isinstance(e, CheckpointRecorded)]
    assert events[-1].data.instructions == "keep the API decisions"


def test_instructions_with_a_lone_surrogate_are_one_line_and_exit_2(tmp_path: Path) -> None:
    """Bytes a terminal could not decode in --instructions: exit 2, one line, nothing appended."""
    path = tmp_path / "small.jsonl"
    with Session(path, sync="batch") as session, session.batch():
        session.append_many(generate(3, seed=1))
    before = path.read_bytes()
    done = run_cli("compact", path, "--force", "--instructions", "keep \udcff it")
    assert done.returncode == 2
    assert done.stderr == (
        "harness compact: instructions must be valid Unicode text: it holds a lone surrogate "
        "(U+DCFF at character 5); give valid Unicode text\n"
    )
    assert path.read_bytes() == before


def test_boundary_option_compacts_right_after_a_completion(tmp_path: Path) -> None:
    """Past the default floor, a completion since the last model call compacts; `none` waits."""
    path = tmp_path / "b.jsonl"
    with Session(path) as session:
        session.start_turn("Fix the parser, then write the docs")
        session.todo_write(todos(("Fix the parser", "in_progress"), ("Write the docs", "pending")))
        reads(session, [f"src/m{i}.py" for i in range(12)], size=70)
        session.todo_write(todos(("Fix the parser", "completed"), ("Write the docs", "pending")))
        held = session.context_tokens
    window = str(int(held / 0.6))  # the request holds 0.6 of it: past 0.5, below 0.9
    waits = harness("compact", path, "--window", window, "--boundary", "none")
    assert waits.returncode == 0, waits.stderr
    assert waits.stdout.startswith("nothing to do: the request holds ")
    done = compact_json(path, "--window", window)  # the default: auto, 0.5 of the window
    assert done["compacted"] is True
    assert done["first_seq"] == 1
    assert done["pending"] == ["Write the docs"]
