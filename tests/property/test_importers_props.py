"""Importers over generated records, well-formed or not: never crash, always a valid log."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from strategies import claude_code_records, codex_records, openai_messages

from compaction import check_log
from compaction.events import Event, MessageAdded
from compaction.importers import ImportReport, load
from compaction.importers._formats import FormatChoice
from compaction.stores.log_reader import read_events
from compaction.stores.log_writer import SessionLog


def import_records(records: list[object], fmt: FormatChoice) -> tuple[list[Event], ImportReport]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        report = ImportReport(path=str(path))
        events = list(load(path, fmt, report=report))
        with SessionLog(Path(tmp) / "log.jsonl", sync="batch") as log:
            log.append_many([e.data for e in events])
        assert list(read_events(Path(tmp) / "log.jsonl")) == events
    return events, report


def assert_valid(events: list[Event], report: ImportReport, n_records: int) -> None:
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    check_log(events)
    waiting: list[str] = []
    for event in events:
        if isinstance(event, MessageAdded):
            if event.data.role == "tool":
                assert waiting.pop(0) == event.data.tool_call_id
            else:
                assert not waiting
                waiting = [c.id for c in event.data.tool_calls or ()]
    assert not waiting
    assert report.records == n_records
    assert report.turns == sum(1 for e in events if e.type == "turn/start")
    assert report.todo_writes == sum(1 for e in events if e.type == "todo/write")


@given(st.lists(claude_code_records, max_size=25))
def test_claude_code_never_crashes(records):
    """Any sequence of Claude Code records imports to a valid, paired, replayable log."""
    events, report = import_records(records, "claude-code")
    assert_valid(events, report, len(records))


@given(st.lists(codex_records, max_size=25))
def test_codex_never_crashes(records):
    """Any sequence of Codex rollout records imports to a valid, paired, replayable log."""
    events, report = import_records(records, "codex")
    assert_valid(events, report, len(records))


@given(st.lists(openai_messages, max_size=25))
def test_openai_never_crashes(records):
    """Any sequence of chat messages imports to a valid, paired, replayable log."""
    # A first line holding an array would make the file one JSON array: start with a message.
    records = [{"role": "system", "content": "s"}, *records]
    events, report = import_records(records, "openai")
    assert_valid(events, report, len(records))
