"""The public API of `compaction` is pinned: sorted, complete, importable."""

from __future__ import annotations

import importlib

import compaction


def test_all_is_sorted_and_unique() -> None:
    """__all__ is sorted (ruff's order: constants, classes, functions) and has no repeats."""
    names = compaction.__all__
    assert len(names) == len(set(names))

    def key(name: str) -> tuple[int, str]:
        kind = 0 if name.isupper() else 1 if name[0].isupper() else 2
        return kind, name

    assert names == sorted(names, key=key)


def test_every_name_importable() -> None:
    """Every name in __all__ is an attribute of the package, reachable by from-import."""
    module = importlib.import_module("compaction")
    for name in compaction.__all__:
        assert getattr(module, name) is not None, name
    namespace: dict[str, object] = {}
    exec(f"from compaction import {', '.join(compaction.__all__)}", namespace)
    assert set(compaction.__all__) <= set(namespace)


def test_public_names_are_exported() -> None:
    """Every public name the package imports (other than submodules) is listed in __all__.

    The root loads its names on first use, so each is touched first; then nothing else is there.
    """
    for name in compaction.__all__:
        getattr(compaction, name)
    public = {n for n in vars(compaction) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(compaction, n)).__name__ == "module"}
    assert public - modules - {"annotations"} == set(compaction.__all__)


# The host API: what an agent host imports from the root (issue 29 §3). A name added to or
# taken from the root is a change of the public API, and this list changes with it.
ROOT: frozenset[str] = frozenset(
    {
        "BUILTIN_TOOLS",
        "CODE_OWNED_SECTIONS",
        "COMPACT_CONTEXT",
        "DEFAULT_WINDOW",
        "NARRATIVE_SECTIONS",
        "SECTION_NAMES",
        "TOOL_NAME",
        "Checkpoint",
        "CheckpointData",
        "CheckpointRecorded",
        "CompactionError",
        "CompactionPlan",
        "CompactionPolicy",
        "CompactionResult",
        "ConfigError",
        "ContextWindow",
        "Event",
        "EventData",
        "EventStore",
        "ExtractiveSummarizer",
        "FunctionCall",
        "HarnessError",
        "ImagePart",
        "LogError",
        "LogFormatError",
        "LogIntegrityError",
        "Message",
        "MessageAdded",
        "MessageError",
        "MessagesRetracted",
        "ModePolicy",
        "OpenWork",
        "Origin",
        "PolicyTable",
        "ProviderError",
        "RequestOverflowError",
        "Section",
        "SeqConflictError",
        "Session",
        "SessionLog",
        "Summarizer",
        "SummaryInput",
        "Task",
        "TaskBoard",
        "TaskCreated",
        "TaskRef",
        "TaskStatus",
        "TaskUpdated",
        "TextPart",
        "TodoItem",
        "TodoPanel",
        "TodoStatus",
        "TodoWriteData",
        "TodoWritten",
        "Tokenizer",
        "TokenizerError",
        "ToolCall",
        "ToolHandler",
        "ToolInputError",
        "ToolResult",
        "TranscriptError",
        "TurnEndData",
        "TurnEnded",
        "TurnStartData",
        "TurnStarted",
        "Usage",
        "UsageReportData",
        "UsageReported",
        "builtin_policies",
        "call_tool",
        "check_log",
        "compact",
        "compacting_call",
        "compaction_due",
        "count_message",
        "dump_event",
        "from_anthropic",
        "from_openai",
        "get_tokenizer",
        "is_context_overflow",
        "make_event",
        "maybe_compact",
        "open_store",
        "overflow_policy",
        "parse_checkpoint",
        "parse_event",
        "read_events",
        "redact",
        "remind_if_stale",
        "render_checkpoint",
        "to_messages",
    }
)

# CLI-level and advanced names, imported from their sub-package or module roots instead.
MOVED: dict[str, str] = {
    "DEFAULT_POLICY": "compaction.tools",
    "MAX_ARGUMENT_BYTES": "compaction.tools",
    "MAX_EVENT_BYTES": "compaction.stores",
    "MAX_ITEM_CHARS": "compaction.tools",
    "ORIGINS": "compaction.events",
    "REDACTED": "compaction.secrets",
    "REMIND_AFTER": "compaction.compactor.reminders",
    "RULES": "compaction.invariants",
    "SCHEMA_VERSION": "compaction.events",
    "STATUS_MARKS": "compaction.views",
    "TASK_MARKS": "compaction.views",
    "TASK_STATUSES": "compaction.events",
    "TASK_TOOL_NAMES": "compaction.tools",
    "TASK_WRITE_TOOLS": "compaction.tools",
    "TOKENIZER_NAMES": "compaction.tokens",
    "BadLine": "compaction.stores",
    "ClipData": "compaction.events",
    "ContextProjection": "compaction.views",
    "DeepSeekTokenizer": "compaction.tokens",
    "DroppedItem": "compaction.events",
    "DroppedSection": "compaction.events",
    "HookRun": "compaction.events",
    "JsonlStore": "compaction.stores",
    "LatestTodosProjection": "compaction.views",
    "LogChecker": "compaction.invariants",
    "LogReader": "compaction.stores",
    "PolicyChecker": "compaction.tools",
    "PolicyWarning": "compaction.tools",
    "PostgresStore": "compaction.stores",
    "Progress": "compaction.views",
    "Projection": "compaction.views",
    "ProviderCompactionData": "compaction.events",
    "ProviderTotals": "compaction.views",
    "ReadReport": "compaction.stores",
    "Resume": "compaction.events",
    "RetractData": "compaction.events",
    "SessionInfo": "compaction.stores",
    "SqliteStore": "compaction.stores",
    "SyncPolicy": "compaction.stores",
    "TailRepair": "compaction.stores",
    "TaskCreateData": "compaction.events",
    "TaskUpdateData": "compaction.events",
    "TasksProjection": "compaction.views",
    "TiktokenTokenizer": "compaction.tokens",
    "TodoWriteArgs": "compaction.tools",
    "TodosProjection": "compaction.views",
    "TokenEvidence": "compaction.views",
    "TokenScaleProjection": "compaction.views",
    "UsageProjection": "compaction.views",
    "check_next_seq": "compaction.invariants",
    "check_output": "compaction.summarizers",
    "checkpoint_message_for": "compaction.views",
    "checkpoint_preamble": "compaction.views",
    "clip_note": "compaction.views.clipping",
    "clip_tool_output": "compaction.views.clipping",
    "compact_context": "compaction.compactor.tool_calls",
    "compact_context_schema": "compaction.compactor.compact_context",
    "copy_session": "compaction.stores",
    "cut_points": "compaction.cuts",
    "dump_policies": "compaction.tools",
    "event_json_schema": "compaction.events",
    "fold": "compaction.views",
    "install_bundled_encodings": "compaction.tokens",
    "is_blank": "compaction.tools",
    "is_staging": "compaction.stores",
    "is_store_url": "compaction.stores",
    "load_policies": "compaction.tools",
    "message_text": "compaction.tokens",
    "panel_line": "compaction.views",
    "parameters_schema": "compaction.tools",
    "parse_task_create": "compaction.tools",
    "parse_todo_write": "compaction.tools",
    "plan_update": "compaction.tools",
    "policy_for": "compaction.tools",
    "read_update": "compaction.tools",
    "redact_url": "compaction.secrets",
    "resume_decision": "compaction.compactor._resume",
    "scaled_tokens": "compaction.views",
    "select_cut": "compaction.cuts",
    "shown_message": "compaction.views.clipping",
    "split_sections": "compaction.checkpoint",
    "stale_reminder": "compaction.compactor.reminders",
    "summary_line": "compaction.tools",
    "task_parameters_schema": "compaction.tools",
    "write_new_session": "compaction.stores",
}


def test_root_is_the_host_api() -> None:
    """The root exports exactly the host API: nothing more, nothing less."""
    assert set(compaction.__all__) == ROOT


def test_moved_names_live_in_their_homes() -> None:
    """Each name moved out of the root is public where it now lives, and gone from the root."""
    for name, home in MOVED.items():
        module = importlib.import_module(home)
        assert name in module.__all__, (name, home)
        assert getattr(module, name) is not None
        assert not hasattr(compaction, name), name


def test_provider_tool_shapes_live_in_prompts() -> None:
    """Compaction exports no provider tool shape: prompts.catalog owns them."""
    assert not {"openai_tool", "anthropic_tool", "todo_write"} & set(compaction.__all__)
