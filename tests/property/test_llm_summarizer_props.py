"""Whatever a model answers, compaction through OpenAISummarizer never drops or forges a task."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st
from reference import ReferenceLog, check_against_reference, check_refusal
from strategies import compaction_scripts, model_replies

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
from compaction.llm import ChatClient, ChatConfig
from compaction.summarizers import OpenAISummarizer, record_usage
from harness.testing import Reply, StubModel

Script = tuple[list[Any], list[int], int, float]


def context_request(session: Session) -> dict[str, Any]:
    """The request an agent would send now: a system prompt, then the context view."""
    messages = [m.model_dump(mode="json", exclude_none=True) for m in session.context.as_messages()]
    return {"messages": [{"role": "system", "content": "You are an agent."}, *messages]}


@given(compaction_scripts(), st.lists(model_replies, min_size=1, max_size=5))
def test_any_answer_keeps_every_unfinished_task(script: Script, replies: list[Reply]) -> None:
    """Over generated sessions, compaction points and model answers, the tasks are the log's.

    The expected Pending Jobs and Current Work come from the reference fold of the appended
    payloads (tests/reference.py), read back from the Checkpoint text; a refusal must be one the
    reference justifies.
    """
    payloads, points, window, retain = script
    answers = iter(replies)

    def answer(_: Mapping[str, Any]) -> Reply:
        return next(answers, replies[-1])

    policy = CompactionPolicy(window_tokens=window, retain=retain)
    ref = ReferenceLog()  # the expected sections, folded by hand from what was appended
    with tempfile.TemporaryDirectory() as tmp, StubModel([answer]) as stub:
        path = Path(tmp) / "s.jsonl"
        config = ChatConfig(stub.base_url, "stub", max_retries=1, backoff=0.0, timeout=10.0)
        with Session(path, sync="batch") as session:
            summarizer = OpenAISummarizer(
                ChatClient(config, environ={}), lambda: context_request(session)
            )
            done = 0
            for point in points:
                session.append_many(payloads[done:point])
                for payload in payloads[done:point]:
                    ref.append(payload)
                done = point
                try:
                    result = compact(session, policy, summarizer=summarizer, force=True)
                except CompactionError as exc:
                    check_refusal(ref, exc, policy)  # justified by the reference, or it fails
                    event(f"refused: {exc.code}")
                    continue
                check_against_reference(ref, result)
                ref.append(result.data)
                for usage in record_usage(session, summarizer):
                    ref.append(usage.data)
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
