"""The sub-package roots the CLI and hosts import from have pinned, complete `__all__` lists."""

from __future__ import annotations

import importlib

import pytest

PINNED: dict[str, list[str]] = {
    "compaction.stores": [
        "MAX_EVENT_BYTES", "SCHEMES", "STAGING", "BadLine", "EventStore", "FileStore", "JsonlStore",
        "LogReader", "PostgresStore", "ReadReport", "SessionInfo", "SessionLog", "SessionSource",
        "SqliteStore", "SyncPolicy", "TailRepair", "check_session_id", "copy_session",
        "is_staging", "is_store_url", "lock_exclusive", "log_file", "open_session_store",
        "open_store", "read_events",
        "session_file", "session_of", "unlock", "where_of", "write_new_session",
    ],
    "compaction.llm": [
        "ChatAnswer", "ChatClient", "ChatConfig", "ProviderUsage", "canonical_json", "read_usage",
    ],
    "compaction.importers": [
        "FORMATS", "FORMAT_CHOICES", "IMPORTERS", "LABELS", "Format", "FormatChoice",
        "ImportReport", "Importer", "ReplayCompaction", "ReplayReport", "RuleBreak",
        "detect_format", "import_to_store", "import_transcript", "importer", "load", "replay",
    ],
    "compaction.summarizers": [
        "SUMMARY_PURPOSE", "ExtractiveSummarizer", "OpenAISummarizer", "Summarizer",
        "SummaryInput", "check_output", "find_paths", "instruction", "kept_after_span",
        "looks_like_path", "record_usage", "split_entries", "summary_body",
    ],
}  # fmt: skip
"""Each root's names, as its `__all__` lists them (ruff's order)."""


@pytest.mark.parametrize("root", sorted(PINNED))
def test_all_is_pinned_and_importable(root: str) -> None:
    """__all__ equals the pinned list, and every name in it imports from the root."""
    module = importlib.import_module(root)
    assert module.__all__ == PINNED[root]
    namespace: dict[str, object] = {}
    exec(f"from {root} import {', '.join(module.__all__)}", namespace)
    assert set(PINNED[root]) <= set(namespace)


def test_llm_root_holds_no_summarizer() -> None:
    """compaction.llm is the client only: the summarizer is one floor up, in summarizers."""
    llm = importlib.import_module("compaction.llm")
    assert not hasattr(llm, "OpenAISummarizer")
    summarizers = importlib.import_module("compaction.summarizers")
    assert summarizers.OpenAISummarizer.__module__ == "compaction.summarizers._llm"
