"""Whatever a model answers, compaction through OpenAISummarizer never drops or forges a task."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st
from strategies import compaction_scripts, model_replies

from benchmarks.stub_model import Reply, StubModel
from compaction import (
    CheckpointRecorded,
    CompactionError,
    CompactionPolicy,
    Session,
    check_log,
    compact,
    parse_checkpoint,
    read_events,
)
from compaction.compactor import unfinished
from compaction.llm import ChatClient, ChatConfig, OpenAISummarizer, record_usage

Script = tuple[list[Any], list[int], int, float]


def context_request(session: Session) -> dict[str, Any]:
    """The request an agent would send now: a system prompt, then the context view."""
    messages = [m.model_dump(mode="json", exclude_none=True) for m in session.context.as_messages()]
    return {"messages": [{"role": "system", "content": "You are an agent."}, *messages]}


@given(compaction_scripts(), st.lists(model_replies, min_size=1, max_size=5))
def test_any_answer_keeps_every_unfinished_task(script: Script, replies: list[Reply]) -> None:
    """Over generated sessions, compaction points and model answers, the tasks are the log's."""
    payloads, points, window, retain = script
    answers = iter(replies)

    def answer(_: Mapping[str, Any]) -> Reply:
        return next(answers, replies[-1])

    policy = CompactionPolicy(window_tokens=window, retain=retain)
    with tempfile.TemporaryDirectory() as tmp, StubModel([answer]) as stub:
        path = Path(tmp) / "s.jsonl"
        config = ChatConfig(stub.base_url, "stub", max_retries=1, backoff=0.0, timeout=10.0)
        with Session(path) as session:
            summarizer = OpenAISummarizer(
                ChatClient(config, environ={}), lambda: context_request(session)
            )
            done = 0
            for point in points:
                session.append_many(payloads[done:point])
                done = point
                try:
                    result = compact(session, policy, summarizer=summarizer, force=True)
                except CompactionError:
                    continue
                record_usage(session, summarizer)
                pending, current = unfinished(session.latest_todos)
                assert (result.data.pending, result.data.current) == (pending, current)
                parsed = parse_checkpoint(result.data.text)
                assert (parsed.pending_jobs, parsed.current_work) == (pending, current)
                if result.data.summarizer == "extractive":
                    assert (result.data.fallback_reason or "").startswith("openai failed: ")
                else:
                    assert result.data.fallback_reason is None
                event(f"summarizer {result.data.summarizer}")
        events = list(read_events(path))
        check_log(events)
        for e in events:
            if isinstance(e, CheckpointRecorded):
                assert parse_checkpoint(e.data.text).pending_jobs == e.data.pending
