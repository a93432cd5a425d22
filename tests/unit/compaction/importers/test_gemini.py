"""Gemini CLI 0.61's JSONL chat file: appended messages, repeated ids, compressions as $set."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from compaction import CheckpointRecorded, TodoWritten
from compaction.importers import detect_format, load

TODOS = [
    {"description": "TODO-ALPHA read the code", "status": "completed"},
    {"description": "TODO-BRAVO write the parser", "status": "in_progress"},
]
RESULT = {"functionResponse": {"id": "w1", "name": "write_todos", "response": {"output": "ok"}}}
CALL = {"id": "w1", "name": "write_todos", "args": {"todos": TODOS}, "result": [RESULT]}
SNAPSHOT = "<state_snapshot>\nThe user asked to plan a refactor.\n</state_snapshot>"


def _chat(path: Path) -> Path:
    header = {"sessionId": "s1", "projectHash": "h", "startTime": "t", "kind": "main"}
    context = {"id": "c", "type": "user", "content": [{"text": "<session_context>x"}]}
    snapshot_set = {
        "$set": {
            "messages": [
                context,
                {"id": "s", "type": "user", "content": [{"text": SNAPSHOT}]},
                {"id": "g", "type": "gemini", "content": "Got it."},
            ]
        }
    }
    records = [
        header,
        {"$set": {"messages": [context]}},
        {"id": "u1", "type": "user", "content": [{"text": "Plan the refactor."}]},
        {"id": "g1", "type": "gemini", "content": ""},
        {"$set": {"lastUpdated": "t"}},
        {"id": "g1", "type": "gemini", "content": "", "toolCalls": [CALL]},
        {"id": "g2", "type": "gemini", "content": "Planned."},
        snapshot_set,
        header,
        snapshot_set,
        {"id": "u2", "type": "user", "content": [{"text": "Go on."}]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


class TestChatFile:
    def test_detected_as_gemini(self, tmp_path: Path) -> None:
        """The chat file's header (sessionId and projectHash) tells the format."""
        assert detect_format(_chat(tmp_path / "session-1.jsonl")) == "gemini"

    def test_todos_and_one_compression(self, tmp_path: Path) -> None:
        """The list is read once (the last record of an id wins); a snapshot is one compaction."""
        events = list(load(_chat(tmp_path / "session-1.jsonl"), "gemini"))
        todos = [e for e in events if isinstance(e, TodoWritten)]
        checkpoints = [e for e in events if isinstance(e, CheckpointRecorded)]
        assert [t.content for t in todos[0].data.todos] == [t["description"] for t in TODOS]
        assert len(todos) == 1
        assert len(checkpoints) == 1
        assert checkpoints[0].data.text == SNAPSHOT
        assert checkpoints[0].data.current == ("TODO-BRAVO write the parser",)
        assert checkpoints[0].data.summarizer == "gemini-cli"
        assert Counter(e.type for e in events)["turn/start"] == 2
