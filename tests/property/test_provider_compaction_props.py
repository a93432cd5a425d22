"""Across provider compactions, every unfinished todo reaches the next request, in every format.

The oracle is a plain-Python reading of the last list written: its pending and in-progress
texts, in order. Each round writes a list, pads the context and compacts through a backend (a
provider item, a provider failure, or local); then each format's next request (Responses,
Anthropic, chat completions) must carry every unfinished item verbatim, once, in its section.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from strategies import provider_compaction_scripts

from compaction import CompactionPolicy, Session, TodoItem, compact
from compaction.backends import ReturnedItem
from compaction.backends.base import BackendSpan
from compaction.checkpoint import encode_item
from compaction.events import ProviderCompactionData
from compaction.views.provider_checkpoint import code_owned_text
from prompts import (
    BUILTIN_MODES,
    PromptBuilder,
    anthropic_request,
    openai_request,
    responses_request,
)

AGENT = BUILTIN_MODES["agent"]
BUILDER = PromptBuilder()
POLICY = CompactionPolicy(window_tokens=200_000, retain=0.0)


class Failing:
    """A provider backend whose every call fails."""

    name = "openai-responses"

    def compact_span(self, span: BackendSpan) -> ProviderCompactionData:
        """Fail."""
        raise RuntimeError("provider down")

    def redact(self, text: str) -> str:
        """Return the text."""
        return text

    def api_keys(self) -> list[str]:
        """No key."""
        return []


def backend_for(name: str, round_no: int) -> Any:
    """The backend a round compacts with (None: local)."""
    if name == "openai-responses":
        item = {"type": "compaction", "id": f"c{round_no}", "encrypted_content": f"enc{round_no}"}
        return ReturnedItem("openai-responses", item)
    if name == "anthropic":
        return ReturnedItem("anthropic", {"type": "compaction", "content": f"summary {round_no}"})
    return Failing() if name == "failing" else None


def reference(todos: list[TodoItem]) -> tuple[list[str], list[str]]:
    """The unfinished items of the last list, the slow obvious way."""
    pending = [t.content for t in todos if t.status == "pending"]
    current = [t.content for t in todos if t.status == "in_progress"]
    return pending, current


def sections(text: str) -> tuple[str, str]:
    """The Pending Jobs and Current Work bodies of a rendered text."""
    after_pending = text.split("\n## Pending Jobs\n", 1)[1]
    pending, rest = after_pending.split("\n## Current Work\n", 1)
    current = rest.split("\n## ", 1)[0]
    return pending, current


def check(text: str, pending: list[str], current: list[str]) -> None:
    """Each unfinished item is in its section exactly once, as a whole line."""
    body_pending, body_current = sections(text)
    for body, items in ((body_pending, pending), (body_current, current)):
        lines = body.split("\n")
        for item in items:
            assert lines.count(encode_item(item)) == 1, (item, body)


@settings(max_examples=15, deadline=None)
@given(provider_compaction_scripts())
def test_every_unfinished_item_survives_provider_compactions(
    script: list[tuple[list[TodoItem], str, int]],
) -> None:
    """After each compaction, each format's next request carries every unfinished todo."""
    with tempfile.TemporaryDirectory() as folder, Session(Path(folder) / "s.jsonl") as session:
        session.start_turn("Do the job", mode="agent")
        for round_no, (todos, backend, padding) in enumerate(script):
            payload = [t.model_dump(mode="json") for t in todos]
            assert not session.todo_write({"todos": payload}).is_error
            for i in range(padding):
                session.add_message({"role": "user", "content": f"round {round_no} turn {i}"})
                session.add_message({"role": "assistant", "content": "ok"})
            result = compact(session, POLICY, force=True, backend=backend_for(backend, round_no))
            pending, current = reference(todos)
            provider = result.data.provider
            with_item = provider is not None and provider.item is not None
            responses = responses_request(BUILDER, AGENT, session)
            messages = anthropic_request(BUILDER, AGENT, session, max_tokens=10)
            chat = openai_request(BUILDER, AGENT, session)
            check(chat["messages"][1]["content"], pending, current)
            if with_item and backend == "openai-responses":
                assert responses["input"][0]["encrypted_content"] == f"enc{round_no}"
                check(responses["input"][1]["content"], pending, current)
                check(messages["messages"][0]["content"][0]["text"], pending, current)
            elif with_item:
                assert messages["messages"][0]["content"][0]["content"] == f"summary {round_no}"
                check(messages["messages"][1]["content"][0]["text"], pending, current)
                check(responses["input"][0]["content"], pending, current)
            else:
                check(responses["input"][0]["content"], pending, current)
                assert "enc" not in json.dumps(responses["input"][:1])
            assert code_owned_text(result.data).split("\n").count("## Pending Jobs") == 1
