"""A real Claude Code session compacted through each provider backend keeps every unfinished task.

The transcript is read from ../shared/transcripts (skipped when absent, never copied here),
imported and replayed with local compactions at a 32,000-token window, then compacted once more
through each provider backend against the stub. The oracle is a plain scan of the log: the last
``todo/write`` list's unfinished items and each task's last recorded state.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction import (
    CompactionPolicy,
    Session,
    TaskCreated,
    TaskUpdated,
    TodoWritten,
    compact,
    get_tokenizer,
)
from compaction.backends import BackendConfig
from compaction.checkpoint import encode_item
from compaction.importers import load, replay
from harness.testing import Reply, StubModel
from prompts import (
    BUILTIN_MODES,
    PromptBuilder,
    anthropic_request,
    compaction_backend,
    responses_request,
)

TRANSCRIPTS = ["claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"]
"""The recorded sessions whose log ends with unfinished work (the others finish every task)."""


def unfinished(session: Session) -> tuple[list[str], list[str]]:
    """The unfinished todo texts and task subjects, by a plain scan of the events."""
    todos: list[tuple[str, str]] = []
    tasks: dict[str, tuple[str, str]] = {}
    for event in session.events():
        if isinstance(event, TodoWritten):
            todos = [(t.content, t.status) for t in event.data.todos]
        elif isinstance(event, TaskCreated | TaskUpdated):
            task = event.data.task
            tasks[task.id] = (task.subject, task.status)
    items = [text for text, status in todos if status != "completed"]
    subjects = [s for s, status in tasks.values() if status in ("pending", "in_progress")]
    return items, subjects


@pytest.mark.parametrize("name", TRANSCRIPTS)
@pytest.mark.parametrize("backend", ["openai-responses", "anthropic"])
def test_every_unfinished_task_reaches_the_next_request(
    transcripts: Path, tmp_path: Path, name: str, backend: str
) -> None:
    """After a provider compaction the provider's next request carries every unfinished task."""
    tokenizer = get_tokenizer()
    events = list(load(transcripts / name, tokenizer=tokenizer))
    with Session(tmp_path / "replay.jsonl", tokenizer=tokenizer, sync="batch") as session:
        replay(events, session, CompactionPolicy(window_tokens=32_000))
        items, subjects = unfinished(session)
        assert items or subjects, "each chosen session ends with unfinished work"
        with StubModel([Reply(compaction="opaque-real")]) as stub:
            root = stub.base_url if backend == "openai-responses" else stub.root_url
            config = BackendConfig(base_url=root, model="m", max_retries=0, compact_trigger=1)
            built = compaction_backend(backend, config)
            result = compact(
                session, CompactionPolicy(window_tokens=32_000), force=True, backend=built
            )
        assert result.data.provider is not None
        assert result.data.provider.item is not None
        builder, agent = PromptBuilder(), BUILTIN_MODES["agent"]
        if backend == "openai-responses":
            request = responses_request(builder, agent, session)
            assert request["input"][0]["encrypted_content"] == "opaque-real"
            text = request["input"][1]["content"]
        else:
            request = anthropic_request(builder, agent, session, max_tokens=10)
            assert request["messages"][0]["content"][0]["content"] == "opaque-real"
            text = request["messages"][1]["content"][0]["text"]
    lines = text.split("\n")
    for item in items:
        assert lines.count(encode_item(item)) == 1, item
    for subject in subjects:
        assert sum(line.endswith(encode_item(subject)[2:]) for line in lines) == 1, subject
