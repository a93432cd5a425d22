"""The compaction receipt: which hooks ran and what each narrative section left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli
from loop_sessions import reads, say, todos

from compaction import (
    CompactionError,
    CompactionPlan,
    CompactionPolicy,
    MessageAdded,
    Session,
    compact,
    dump_event,
    parse_event,
)

SMALL = CompactionPolicy(window_tokens=4_000, retain=0.05, summary_share=0.03)
PATHS = [f"src/module_{i:02d}.py" for i in range(30)]


def many_files(path: Path) -> Session:
    """A turn that reads 30 files: more than Files and Code's budget can name."""
    session = Session(path)
    session.start_turn("Review every module under src/")
    session.todo_write(todos(("Review the modules", "in_progress")))
    reads(session, PATHS, size=4)
    session.add_message(say("Reviewed them all."))
    return session


def focus(plan: CompactionPlan) -> str:
    """A hook that adds focus."""
    return "keep the API decisions"


def audit(plan: CompactionPlan) -> None:
    """A hook that only looks."""


def veto(plan: CompactionPlan) -> bool:
    """A hook that vetoes."""
    return False


class TestHooks:
    def test_each_hook_that_ran_is_recorded_with_what_it_added(self, log_path: Path) -> None:
        """Hooks run in order; the event names each, with its added text (or none)."""
        with many_files(log_path) as session:
            r = compact(session, SMALL, force=True, on_compact_start=[audit, focus])
        assert r.event is not None
        hooks = r.event.data.hooks
        assert hooks is not None
        assert [(h.name, h.vetoed, h.added) for h in hooks] == [
            ("audit", False, None),
            ("focus", False, "keep the API decisions"),
        ]
        assert r.data.instructions == "keep the API decisions"

    def test_a_single_callable_hook_is_recorded_too(self, log_path: Path) -> None:
        """The one-hook form of `on_compact_start` leaves the same receipt."""
        with many_files(log_path) as session:
            r = compact(session, SMALL, force=True, on_compact_start=focus)
        assert r.data.hooks is not None
        assert [h.name for h in r.data.hooks] == ["focus"]

    def test_a_veto_names_the_hook_and_appends_nothing(self, log_path: Path) -> None:
        """A vetoing hook stops the compaction; later hooks never run."""
        ran: list[str] = []

        def later(plan: CompactionPlan) -> None:
            ran.append("later")

        with many_files(log_path) as session:
            seq = session.applied_seq
            with pytest.raises(CompactionError, match="hook 'veto' vetoed") as caught:
                compact(session, SMALL, force=True, on_compact_start=[audit, veto, later])
            assert session.applied_seq == seq
        assert caught.value.code == "vetoed"
        assert ran == []

    def test_without_hooks_the_event_has_no_hooks_field(self, log_path: Path) -> None:
        """No hook ran: the field is absent from the line (old readers see what they knew)."""
        with many_files(log_path) as session:
            r = compact(session, SMALL, force=True)
        assert r.event is not None
        assert '"hooks"' not in dump_event(r.event)


class TestDropped:
    def test_files_left_out_are_listed_with_the_seqs_that_hold_them(self, log_path: Path) -> None:
        """Every file the span read that Files and Code omits is listed; its seqs hold it."""
        with many_files(log_path) as session:
            r = compact(session, SMALL, force=True)
            assert r.data.dropped is not None
            dropped = {d.section: d for d in r.data.dropped}
            files = dropped["Files and Code"]
            shown = r.checkpoint.files_and_code
            # The oracle: the paths read in the replaced span that the section does not name.
            in_span = [
                p
                for p in PATHS
                if any(
                    p in c.function.arguments
                    for e in session.events()
                    if isinstance(e, MessageAdded) and e.seq <= r.data.last_seq
                    for c in e.data.tool_calls or ()
                )
            ]
            replaced = [p for p in in_span if f"`{p}`" not in shown]
            assert replaced, "the budget should leave some files out"
            listed = [i.text for i in files.items]
            assert listed == replaced[: len(listed)]
            assert files.more == len(replaced) - len(listed)
            for item in files.items:
                assert item.seqs
                for seq in item.seqs:
                    event = session.event(seq)
                    assert isinstance(event, MessageAdded)
                    calls = event.data.tool_calls or ()
                    assert any(item.text in c.function.arguments for c in calls) or (
                        item.text in event.data.text()
                    )

    def test_nothing_left_out_records_no_dropped_field(self, log_path: Path) -> None:
        """A span whose every fact reaches the Checkpoint leaves `dropped` empty (None)."""
        with Session(log_path) as session:
            session.start_turn("Say hello")
            session.add_message(say("Hello."))
            session.start_turn("Thanks")
            r = compact(session, CompactionPolicy(window_tokens=50_000), force=True)
        assert r.data.dropped is None

    def test_an_old_checkpoint_line_still_parses_and_dumps_the_same(self) -> None:
        """The receipt fields are optional: a line written before them is still valid."""
        line = json.dumps(
            {
                "v": 1,
                "seq": 9,
                "type": "compaction/checkpoint",
                "data": {
                    "text": "# Checkpoint\n",
                    "first_seq": 1,
                    "last_seq": 8,
                    "tokens_before": 100,
                    "tokens_after": 40,
                    "summarizer": "extractive",
                    "pending": [],
                    "current": [],
                },
            },
            separators=(",", ":"),
        )
        assert dump_event(parse_event(line)) == line


class TestCli:
    def test_harness_log_seq_prints_the_receipt_then_the_checkpoint(self, log_path: Path) -> None:
        """`harness log LOG --seq N` on a compaction shows span, resume, hooks and dropped."""
        with many_files(log_path) as session:
            r = compact(session, SMALL, force=True, on_compact_start=[focus])
        assert r.event is not None
        run = run_cli("log", log_path, "--seq", str(r.event.seq))
        assert run.returncode == 0, run.stderr
        lines = run.stdout.splitlines()
        assert lines[0].startswith(
            f"compaction/checkpoint at seq {r.event.seq}: replaced events 1..{r.data.last_seq} "
        )
        assert lines[0].endswith("resume await_user")
        assert 'hook "focus": ran, added "keep the API decisions"' in lines
        assert "dropped from Files and Code:" in lines
        assert any(line.startswith('  - "src/module_00.py" (seqs ') for line in lines)
        assert run.stdout.endswith(r.data.text)
