"""`harness import FORMAT FILE -o LOG`: turn an agent's transcript into a session log."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from compaction import get_tokenizer
from compaction.importers import FORMAT_CHOICES, LABELS, ImportReport, import_to_store
from compaction.secrets import redact_url
from compaction.stores import FileStore
from harness.commands.env_options import add_tokenizer_option
from harness.commands.stores import add_session_option, opened
from harness.files import check_file
from harness.output import (
    HelpFormatter,
    console,
    count_lines,
    examples,
    is_large,
    print_json,
    progress,
)

_EVENT_KINDS = frozenset({"user request", "assistant message", "tool result", "compact_boundary"})
"""Handled kinds the other lines already count; the rest are messages that start no turn."""

_SHOWN_LINES = 10
"""Broken lines and rule-breaking lists listed one by one before the rest are counted."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `import` command."""
    p = sub.add_parser(
        "import",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness import auto ~/.claude/projects/-my-repo/SESSION.jsonl -o s.jsonl",
            "harness import gemini ~/.gemini/tmp/HASH/chats/session-1.json -o s.jsonl --strict",
        ),
        help=f"import an agent transcript ({LABELS})",
        description=(
            "Read an agent's transcript and write its session log: turns, messages, tool calls "
            "paired with their results, todo lists, and the agent's own compactions. Prints what "
            "was read, written and skipped. Broken lines and unknown records are counted and "
            "skipped unless --strict. A transcript that holds no session events is an error "
            "(exit 2), never an empty log. The provider's recorded token usage (Claude Code, "
            "Codex, Gemini CLI) is kept as usage/report events, so `harness log` shows the real "
            "cache-hit share."
        ),
    )
    p.add_argument(
        "format", metavar="FORMAT", choices=FORMAT_CHOICES, help=" | ".join(FORMAT_CHOICES)
    )
    p.add_argument("file", metavar="FILE", type=Path, help="the transcript")
    p.add_argument(
        "-o",
        "--output",
        metavar="LOG",
        required=True,
        help="new session log (JSONL file), or a store URL with --session",
    )
    add_session_option(p)
    p.add_argument(
        "--strict",
        action="store_true",
        help="stop at the first broken line or unknown record (default: count and skip)",
    )
    p.add_argument(
        "--force", action="store_true", help="replace LOG (or the store's session) if it exists"
    )
    add_tokenizer_option(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Import the transcript and print the summary."""
    check_file(args.file, what="transcript")
    tokenizer = get_tokenizer(args.tokenizer)
    with opened(args.output, args.session, must_exist=False, sync="batch") as (store, session):
        output = (
            args.output if isinstance(store, FileStore) else f"{redact_url(args.output)}#{session}"
        )
        large = is_large(args.file)
        total = count_lines(args.file) if large else None
        with progress(f"importing {args.file.name}", total, show=large) as update:
            report = import_to_store(
                args.file,
                store,
                session,
                args.format,
                strict=args.strict,
                overwrite=args.force,
                tokenizer=tokenizer,
                on_progress=lambda r: update(r.lines),
            )
    if args.json:
        print_json({"output": output, **report.as_dict()})
    else:
        console().print(summary_text(report, output), markup=False)
    return 0


def summary_text(report: ImportReport, output: Path | str) -> str:
    """Return the plain-text summary of an import."""
    calls = f"{report.tool_calls} tool calls"
    if report.unanswered_calls:
        calls += f" ({report.unanswered_calls} with no recorded result: placeholder written)"
    lines = [
        f"{report.path} ({report.format}) -> {output}",
        f"records read: {report.records}; lines: {report.lines}",
        f"events written: {report.events} ({_counts(report.events_by_type)})",
        f"turns: {report.turns}; {calls}; todo writes: {report.todo_writes}; "
        f"recorded compactions: {report.checkpoints}",
        f"tokens ({report.tokenizer}): {report.total_tokens} in all messages, "
        f"{report.context_tokens} in the context at the end",
    ]
    context = {k: n for k, n in report.handled.items() if k not in _EVENT_KINDS}
    if context:
        lines.append(f"kept as messages, not requests: {_counts(context)}")
    if report.rule_breaking_lists:
        lines.append(
            f"lists that break today's todo_write rules (imported as written): "
            f"{len(report.rule_breaking_lists)}"
        )
        for rb in report.rule_breaking_lists[:_SHOWN_LINES]:
            lines.append(f"  seq {rb.seq}: {'; '.join(rb.violations)}")
    if report.skipped:
        lines.append(f"skipped: {sum(report.skipped.values())}")
        lines += [f"  {n:>6}  {reason}" for reason, n in sorted(report.skipped.items())]
    if report.glued_lines:
        lines.append(f"lines holding glued JSON objects (all read): {_numbers(report.glued_lines)}")
    for bad in report.broken_lines[:_SHOWN_LINES]:
        lines.append(f"broken line {bad.line}: {bad.reason} (skipped)")
    if len(report.broken_lines) > _SHOWN_LINES:
        lines.append(f"...and {len(report.broken_lines) - _SHOWN_LINES} more broken lines")
    if report.torn_line is not None:
        lines.append(f"truncated last line {report.torn_line} (skipped)")
    return "\n".join(lines)


def _counts(counter: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counter.items()))


def _numbers(values: list[int]) -> str:
    shown = ", ".join(str(v) for v in values[:_SHOWN_LINES])
    return shown + (f" (+{len(values) - _SHOWN_LINES} more)" if len(values) > _SHOWN_LINES else "")
