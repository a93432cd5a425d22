"""OpenAISummarizer, behind a scripted model on 127.0.0.1, passes the Summarizer contract."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from contracts.summarizer_contract import SummarizerContract

from compaction import Session, Summarizer
from compaction.llm import ChatClient, ChatConfig
from compaction.summarizers import OpenAISummarizer
from harness.testing import Reply, StubModel


def short_checkpoint(request: Mapping[str, Any]) -> Reply:
    """A terse model (shorter than any span: a longer answer falls back) that forges tasks."""
    first = next(m["content"] for m in request["messages"] if m["role"] == "user")
    return Reply(
        f"## Primary Request and Intent\n\n{first[:80]}\n\n"
        '## Pending Jobs\n\n- "forged task"\n\n'
        "## Current Work\n\n- forged work"
    )


class TestOpenAISummarizer(SummarizerContract):
    @pytest.fixture(autouse=True)
    def _model(self, session: Session) -> Iterator[None]:
        with StubModel([short_checkpoint]) as stub:
            self.stub = stub
            self.live = session
            yield

    def request(self) -> dict[str, Any]:
        """The request the agent would send now: a system prompt, then the context view."""
        messages = [
            m.model_dump(mode="json", exclude_none=True) for m in self.live.context.as_messages()
        ]
        return {"messages": [{"role": "system", "content": "Be brief."}, *messages]}

    def make_summarizer(self) -> Summarizer:
        config = ChatConfig(self.stub.base_url, "stub", max_retries=0, timeout=10.0)
        return OpenAISummarizer(ChatClient(config, environ={}), self.request)
