from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from compaction import Message, TodoWriteData, TurnStartData
from compaction.tools import parse_todo_write
from harness.simulation import dump_exchange, generate, user_tools, write_session
from harness.simulation._session_exchange import EXCHANGE_FORMAT, load_exchange
from harness.simulation._session_profiles import PROFILES
from harness.simulation._session_text import PLAN_STEPS, TEMPLATES
from harness.simulation._sessions import unfinished


def _modes_by_event(payloads: list[Any]) -> list[str | None]:
    mode: str | None = None
    out = []
    for p in payloads:
        if isinstance(p, TurnStartData):
            mode = p.mode
        out.append(mode)
    return out


class TestGenerate:
    def test_same_seed_same_session(self):
        """The same turns and seed give identical payloads; another seed differs."""
        assert generate(8, 3) == generate(8, 3)
        assert generate(8, 3) != generate(8, 4)

    @pytest.mark.parametrize("turns", [1, 2, 3, 8])
    def test_turn_count(self, turns):
        """A session holds one turn/start per requested turn."""
        starts = [p for p in generate(turns, 0) if isinstance(p, TurnStartData)]
        assert len(starts) == turns

    def test_rejects_zero_turns(self):
        """Zero turns is a programming error."""
        with pytest.raises(ValueError, match="at least 1"):
            generate(0)

    def test_every_tool_call_answered_in_order(self):
        """Each assistant tool call is answered by one tool message, right after it."""
        msgs = [p for p in generate(10, 1) if isinstance(p, Message)]
        i = 0
        while i < len(msgs):
            m = msgs[i]
            ids = [c.id for c in m.tool_calls or ()]
            answers = [x.tool_call_id for x in msgs[i + 1 : i + 1 + len(ids)]]
            assert answers == ids
            i += 1 + len(ids)

    def test_todo_writes_are_valid_and_recorded(self):
        """Each todo_write call passes validation and is followed by its todo/write event."""
        payloads = generate(10, 2)
        writes = 0
        for i, p in enumerate(payloads):
            if isinstance(p, Message) and p.tool_calls:
                call = p.tool_calls[0]
                if call.function.name == "todo_write":
                    todos = parse_todo_write(call.function.arguments)
                    nxt = payloads[i + 1]
                    assert isinstance(nxt, TodoWriteData)
                    assert nxt.todos == todos
                    writes += 1
        assert writes > 10

    def test_items_progress_through_statuses(self):
        """Some item goes pending, then in_progress, then completed across writes."""
        seen: dict[str, list[str]] = {}
        for p in generate(4, 0):
            if isinstance(p, TodoWriteData):
                for t in p.todos:
                    hist = seen.setdefault(t.content, [])
                    if not hist or hist[-1] != t.status:
                        hist.append(t.status)
        assert ["pending", "in_progress", "completed"] in seen.values()

    def test_plan_phase_reads_only(self):
        """The Plan-mode turn makes no todo_write and no edit, and ends with a plan."""
        payloads = generate(9, 0)
        modes = _modes_by_event(payloads)
        plan = [p for p, m in zip(payloads, modes, strict=True) if m == "plan"]
        assert plan
        names = {
            c.function.name for p in plan if isinstance(p, Message) for c in p.tool_calls or ()
        }
        assert names <= {"read_file", "grep"}
        assert not any(isinstance(p, TodoWriteData) for p in plan)
        last = [p for p in plan if isinstance(p, Message) and p.role == "assistant"][-1]
        assert "1. " in last.text()

    @pytest.mark.parametrize(("turns", "seed"), [(1, 0), (5, 1), (12, 7)])
    def test_unfinished_at_end(self, turns, seed):
        """The latest list ends with unfinished items, one of them in progress."""
        left = unfinished(generate(turns, seed))
        assert left
        assert [t.status for t in left].count("in_progress") == 1

    def test_large_tool_outputs(self):
        """Some tool results are large (file reads and test logs of several kilobytes)."""
        sizes = [len(p.text()) for p in generate(6, 0) if isinstance(p, Message)]
        assert max(sizes) > 5000


class TestWriteSession:
    def test_log_replays_to_same_todos(self, log_path):
        """The written log holds the payloads; its latest todos are the session's."""
        payloads = generate(5, 1)
        with write_session(log_path, 5, 1) as session:
            assert session.applied_seq == len(payloads)
            writes = [p for p in payloads if isinstance(p, TodoWriteData)]
            assert session.latest_todos == writes[-1].todos

    def test_refuses_existing_log(self, log_path):
        """A generated session never extends an existing log."""
        log_path.write_text("")
        with pytest.raises(FileExistsError, match="exists"):
            write_session(log_path, 2)


class TestExchange:
    def test_round_trip(self, tmp_path: Path):
        """dump_exchange then load_exchange gives back the same payloads."""
        payloads = generate(7, 5)
        path = dump_exchange(payloads, tmp_path / "s.json", seed=5, turns=7)
        assert load_exchange(path) == payloads

    def test_format_fields(self, tmp_path: Path):
        """The file names its format, holds the tools, turns, first request and unfinished."""
        payloads = generate(4, 0)
        doc = json.loads(dump_exchange(payloads, tmp_path / "s.json").read_text())
        assert doc["format"] == EXCHANGE_FORMAT
        assert len(doc["turns"]) == 4
        assert doc["tools"] == list(user_tools())
        first = payloads[1]
        assert isinstance(first, Message)
        assert doc["first_request"] == first.text()
        assert doc["unfinished"] == [t.model_dump() for t in unfinished(payloads)]
        write = doc["turns"][0]["todo_writes"][0]
        call = doc["turns"][0]["messages"][write["after_message"]]["tool_calls"][0]
        assert call["id"] == write["tool_call_id"]

    def test_rejects_other_json(self, tmp_path: Path):
        """A JSON file in another format is refused with its name."""
        path = tmp_path / "x.json"
        path.write_text('{"format": "other"}')
        with pytest.raises(ValueError, match="not a context-harness/session-exchange"):
            load_exchange(path)


STEP_VERBS = sorted(
    {text.split()[0].lower() for _, steps in TEMPLATES for _, text in steps}
    | {text.split()[0].lower() for _, text in PLAN_STEPS}
)
"""The verbs the todo items start with (each item is an imperative verb phrase)."""
NOUN_SLOTS = ("look at", "check", "moving on to", "working on")
"""Phrases that want a noun after them: a todo item there reads "look at fix the ..."."""


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_narration_takes_the_item_as_a_verb_phrase(profile: str, seed: int) -> None:
    bad = re.compile(rf"\b(?:{'|'.join(NOUN_SLOTS)}) (?:{'|'.join(STEP_VERBS)})\b", re.IGNORECASE)
    texts = [
        p.text()
        for p in generate(12, seed, profile)
        if isinstance(p, Message) and p.role == "assistant" and p.content
    ]
    assert texts, "the session has assistant text to check"
    found = [t for t in texts if bad.search(t)]
    assert not found, found[:3]
    # the narration does name the item: some line carries an item verb right after "I'll"/"to"
    assert any(re.search(rf"\b(?:I'll|to) (?:{'|'.join(STEP_VERBS)})\b", t) for t in texts)
