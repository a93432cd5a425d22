"""The offline summarizer passes the Summarizer contract."""

from __future__ import annotations

from contracts.summarizer_contract import SummarizerContract

from compaction import ExtractiveSummarizer, Summarizer


class TestExtractiveSummarizer(SummarizerContract):
    def make_summarizer(self) -> Summarizer:
        return ExtractiveSummarizer()
