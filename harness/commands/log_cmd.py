"""`harness log LOG`: validate a log and summarise it; `--seq N`: one event whole; `--schema`.

``harness log LOG --seq N`` prints event N as recorded: a message's text in full (the way back to
a tool result the context view shows clipped) and its tool calls, a compaction's receipt and
Checkpoint (`harness.commands.log_receipts`), or with ``--json`` the event itself. The summary
lists the turns that ended with open work.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from rich.table import Table

from compaction import (
    DEFAULT_WINDOW,
    CheckpointRecorded,
    ConfigError,
    Event,
    LogError,
    LogFormatError,
    Message,
    MessageAdded,
    OpenWork,
    ToolCall,
    TurnEnded,
    Usage,
    dump_event,
    get_tokenizer,
)
from compaction.events import event_json_schema
from compaction.invariants import RULES, LogChecker
from compaction.secrets import redact_url
from compaction.stores import ReadReport
from compaction.tools import PolicyChecker
from compaction.views import CallTracker, TokenScaleProjection, UsageProjection
from harness.commands.env_options import (
    WINDOW_ENV,
    add_tokenizer_option,
    env_value,
    with_env,
)
from harness.commands.log_receipts import MAX_OPEN_TURNS, open_work_text, receipt_lines
from harness.commands.stores import (
    add_log_argument,
    add_session_option,
    not_a_log,
    read_log,
)
from harness.output import (
    HelpFormatter,
    console,
    count_lines,
    examples,
    is_large,
    positive_int,
    print_json,
    progress,
)
from prompts import available_modes, policy_table

DESCRIPTION = (
    "Read LOG, check its durable rules, and print events by type, tokens, and any torn or "
    "bad lines. Warns (exit status unchanged) about each recorded todo/write, task/create "
    "or task/update inside a turn whose mode forbids that tool, as imported history may "
    "hold. Exits 2 on a malformed line unless --skip-bad is given. With --schema, "
    "print the JSON Schema of one log line instead (generated from the event models; "
    "compaction/schemas/event.schema.json is this output)."
)
"""The `log` command's help description."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `log` command."""
    p = sub.add_parser(
        "log",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness log s.jsonl",
            "harness log s.jsonl --json",
            "harness log --schema",
            "harness log s.jsonl --plot requests.png --window 200000",
        ),
        help="validate a log and summarise it",
        description=DESCRIPTION,
    )
    add_log_argument(p, optional=True)
    add_session_option(p)
    p.add_argument(
        "--schema", action="store_true", help="print the JSON Schema of a log line and exit"
    )
    p.add_argument(
        "--seq",
        type=int,
        metavar="N",
        help="print event N whole: a message's full text (a clipped tool result too), "
        "or the event as JSON with --json",
    )
    p.add_argument("--skip-bad", action="store_true", help="count and skip malformed lines")
    add_tokenizer_option(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--modes-file", metavar="FILE", help="user modes (TOML or JSON)")
    p.add_argument(
        "--plot",
        type=Path,
        metavar="FILE.png",
        help="draw the request size of each model call (from usage/report where present, "
        "else counted), compactions marked and the window drawn; needs the charts extra",
    )
    p.add_argument(
        "--window",
        type=positive_int,
        default=env_value(WINDOW_ENV, positive_int, DEFAULT_WINDOW),
        metavar="N",
        help=with_env(
            f"the context window --plot draws (default: {DEFAULT_WINDOW})", "HARNESS_WINDOW"
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read, check and summarise the log (or print the schema, or one event)."""
    if args.schema:
        print_json(event_json_schema())
        return 0
    if args.log is None:
        raise ConfigError("give a LOG to summarise, or --schema")
    if args.seq is not None:
        return _show(args)
    if args.plot is not None:
        return _plot(args)
    shown = redact_url(args.log)  # a store URL's password is never printed
    report = ReadReport(path=shown)
    usage, warnings, open_turns, scale = _check(args, report)
    if args.json:
        summary = _summary(shown, report, usage, warnings, open_turns, scale)
        calls = [{"seq": s, "id": c.id, "name": c.function.name} for s, c in args.unanswered]
        print_json({**summary, "unanswered_calls": calls})
    else:
        warnings += unanswered_warnings(args.unanswered)
        _print_summary(shown, report, usage, warnings, open_turns, scale)
    return 0


OpenTurns = list[dict[str, object]]
"""The turns that ended with open work: each `turn/end`'s seq and its `open` counts and ids."""


def _check(
    args: argparse.Namespace, report: ReadReport
) -> tuple[Usage, list[str], OpenTurns, float | None]:
    """Read LOG in one streaming pass: check its rules, fold its usage, collect policy warnings.

    The checks and the usage fold keep counts and ids, never the events.

    Raises:
        LogError: LOG holds no event at all (its first line is not one, or none of its lines).
        LogFormatError: a malformed line after the first event, unless --skip-bad.
        LogIntegrityError: a durable rule is broken.
    """
    checker = LogChecker(RULES if not args.skip_bad else ())
    policies = PolicyChecker(policy_table(available_modes(args.modes_file)))
    warnings: list[str] = []
    open_turns: OpenTurns = []
    projection = UsageProjection(get_tokenizer(args.tokenizer))
    state = projection.init()
    scaling = TokenScaleProjection()
    samples = scaling.init()
    calls = CallTracker()
    large = is_large(args.log)
    total = count_lines(args.log) if large else None
    try:
        with progress(f"reading {report.path}", total, show=large) as update:
            for n, event in enumerate(read_log(args, report), start=1):
                checker.feed(event)
                state = projection.apply(state, event)
                samples = scaling.apply(samples, event)
                calls.feed(event)
                if (found := policies.feed(event)) is not None:
                    warnings.append(str(found))
                if isinstance(event, TurnEnded) and event.data.open is not None:
                    open_turns.append({"seq": event.seq, **event.data.open.model_dump()})
                if n % 4096 == 0:
                    update(n)
    except LogFormatError as exc:
        if report.events:
            raise
        raise not_a_log(report.path, f"line {exc.line}: {exc.reason}") from None
    checker.finish()
    if report.lines and not report.events:
        raise LogError(
            f"{report.path} is not a session log: none of its {report.lines} lines is an event"
        )
    scale = scaling.view(samples).scale(lambda seq: projection.tokens_of(state, seq))
    args.unanswered = calls.unanswered()  # read by the summary: the calls without a result
    return projection.view(state), warnings, open_turns, scale


MAX_UNANSWERED = 5
"""Unanswered tool calls named one by one in the warnings; the rest are counted."""


def unanswered_warnings(left: list[tuple[int, ToolCall]]) -> list[str]:
    """One warning per tool call the log holds without a result (a process killed inside it)."""
    lines = [
        f"tool call {call.id} ({call.function.name}) at seq {seq} has no result (a process "
        "stopped inside it?): the next request answers it with a placeholder error "
        "(Session.answer_open_calls)"
        for seq, call in left[:MAX_UNANSWERED]
    ]
    if len(left) > MAX_UNANSWERED:
        lines.append(f"{len(left) - MAX_UNANSWERED} more tool calls have no result")
    return lines


def _summary(
    log: str,
    report: ReadReport,
    usage: Usage,
    warnings: list[str],
    open_turns: OpenTurns,
    scale: float | None,
) -> dict[str, Any]:
    """Return the summary ``--json`` prints."""
    return {
        "path": log,
        "lines": report.lines,
        "events": report.events,
        "events_by_type": dict(sorted(report.by_type.items())),
        "tokens_by_type": usage.tokens_by_type,
        "tokenizer": usage.tokenizer,
        "total_tokens": usage.total_tokens,
        "context_tokens": usage.context_tokens,
        "token_scale": scale,
        "torn_line": report.torn_line,
        "bad_lines": [{"line": b.line, "reason": b.reason} for b in report.bad_lines],
        "provider_usage": {
            k: {**v.model_dump(), "cache_hit_share": v.cache_hit_share}
            for k, v in usage.provider_by_purpose.items()
        },
        "policy_warnings": warnings,
        "turns_with_open_work": open_turns,
    }


def _print_summary(
    log: str,
    report: ReadReport,
    usage: Usage,
    warnings: list[str],
    open_turns: OpenTurns,
    scale: float | None,
) -> None:
    """Print the summary as a table of events and tokens by type, then one line per finding."""
    out = console()
    table = Table(title=f"{log}: {report.events} events", title_justify="left")
    table.add_column("type")
    table.add_column("events", justify="right")
    table.add_column("tokens", justify="right")
    for kind, n in sorted(report.by_type.items()):
        table.add_row(kind, str(n), str(usage.tokens_by_type.get(kind, 0)))
    out.print(table)
    out.print(
        f"tokens ({usage.tokenizer}): {usage.total_tokens} in all messages, "
        f"{usage.context_tokens} in the context now"
    )
    out.print(
        f"token scale: {scale:g} provider prompt tokens per counted token"
        if scale is not None
        else "token scale: not known yet (too few provider usage reports)"
    )
    for purpose, t in usage.provider_by_purpose.items():
        hit = t.cache_hit_share
        share = f" (cache-hit share {hit:.1%})" if hit is not None else ""
        writes = f", {t.cache_write_tokens} written to the cache" if t.cache_write_tokens else ""
        out.print(
            f"provider usage, {purpose}: {t.requests} calls, {t.prompt_tokens} prompt tokens, "
            f"{t.cached_tokens} cached{share}{writes}, {t.completion_tokens} completion tokens"
        )
    if report.torn_line is not None:
        out.print(f"torn last line {report.torn_line} (a crash mid-append): skipped")
    for bad in report.bad_lines:
        out.print(f"bad line {bad.line}: {bad.reason} (skipped)")
    for warning in warnings:
        out.print(f"warning: {warning}")
    _print_open_turns(open_turns)


def _print_open_turns(turns: list[dict[str, object]]) -> None:
    """Print the turns that ended with open work (the latest `MAX_OPEN_TURNS`)."""
    if not turns:
        return
    sys.stdout.write(f"turns that ended with open work: {len(turns)}\n")
    for turn in turns[-MAX_OPEN_TURNS:]:
        work = OpenWork.model_validate({k: v for k, v in turn.items() if k != "seq"})
        sys.stdout.write(f"  turn/end at seq {turn['seq']}: {open_work_text(work)}\n")


def _plot(args: argparse.Namespace) -> int:
    """Draw the log's request sizes to --plot (see `harness.commands.log_plot`)."""
    from harness.commands.log_plot import check_plot_path, plot_series, request_series

    check_plot_path(Path(args.plot))
    with closing(read_log(args, ReadReport(path=redact_url(args.log)))) as events:
        series = request_series(events, get_tokenizer(args.tokenizer))
    if not series.sizes:
        raise LogError(f"{redact_url(args.log)} holds no model call (no assistant message) to plot")
    path = plot_series(series, args.plot, window=args.window, title=redact_url(args.log))
    summary = {
        "plot": str(path),
        "model_calls": len(series.sizes),
        "reported_calls": series.reported_calls,
        "compactions": len(series.compactions),
        "peak_request_tokens": max(series.sizes),
        "window": args.window,
    }
    if args.json:
        print_json(summary)
    else:
        print(
            f"wrote {path}: {summary['model_calls']} model calls "
            f"({summary['reported_calls']} from usage/report), "
            f"{summary['compactions']} compactions, peak {summary['peak_request_tokens']:,} "
            f"tokens against a {args.window:,}-token window"
        )
    return 0


def message_text(message: Message) -> str:
    """Return a message as ``--seq`` prints it: its text, then one line per tool call.

    An assistant message made only of tool calls prints its calls (``call ID: NAME ARGS``), so
    the way back never shows an empty line.
    """
    calls = [
        f"call {c.id}: {c.function.name} {c.function.arguments}" for c in message.tool_calls or ()
    ]
    return "\n".join([message.text(), *calls] if message.text() else calls)


def _show(args: argparse.Namespace) -> int:
    """Print one event whole (see the module docstring)."""
    # Closed on return: a read left suspended would keep the collector paused.
    with closing(read_log(args, ReadReport(path=redact_url(args.log)))) as events:
        return _show_from(args, events)


def _show_from(args: argparse.Namespace, events: Iterator[Event]) -> int:
    for event in events:
        if event.seq != args.seq:
            continue
        if args.json:
            print_json(event.model_dump(mode="json", exclude_none=True))
        elif isinstance(event, MessageAdded):
            sys.stdout.write(message_text(event.data) + "\n")
        elif isinstance(event, CheckpointRecorded):
            sys.stdout.write("\n".join(receipt_lines(event)) + "\n" + event.data.text)
        else:
            sys.stdout.write(dump_event(event) + "\n")
        return 0
    raise LogError(f"{redact_url(args.log)}: no event with seq {args.seq}")
