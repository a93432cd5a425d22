"""`harness log LOG`: validate a log and summarise it; `--seq N`: one event whole; `--schema`.

``harness log LOG --seq N`` prints event N as recorded: a message's text in full (the way back to
a tool result the context view shows clipped), or with ``--json`` the event itself.
"""

from __future__ import annotations

import argparse
import sys

from rich.table import Table

from compaction import (
    RULES,
    TOKENIZER_NAMES,
    ConfigError,
    LogChecker,
    LogError,
    LogFormatError,
    MessageAdded,
    PolicyChecker,
    ReadReport,
    TokenScaleProjection,
    UsageProjection,
    dump_event,
    event_json_schema,
    get_tokenizer,
)
from harness.commands.stores import LOG_HELP, add_session_option, read_log
from harness.output import (
    HelpFormatter,
    console,
    count_lines,
    examples,
    is_large,
    print_json,
    progress,
)
from prompts import available_modes, policy_table


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `log` command."""
    p = sub.add_parser(
        "log",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness log s.jsonl",
            "harness log s.jsonl --json",
            "harness log --schema",
        ),
        help="validate a log and summarise it",
        description=(
            "Read LOG, check its durable rules, and print events by type, tokens, and any torn or "
            "bad lines. Warns (exit status unchanged) about each recorded todo/write, task/create "
            "or task/update inside a turn whose mode forbids that tool, as imported history may "
            "hold. Exits 2 on a malformed line unless --skip-bad is given. With --schema, "
            "print the JSON Schema of one log line instead (generated from the event models; "
            "compaction/schemas/event.schema.json is this output)."
        ),
    )
    p.add_argument("log", metavar="LOG", nargs="?", help=LOG_HELP)
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
    p.add_argument("--tokenizer", default="o200k_base", choices=TOKENIZER_NAMES)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--modes-file", metavar="FILE", help="user modes (TOML or JSON)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read, check and summarise the log (or print the schema)."""
    if args.schema:
        print_json(event_json_schema())
        return 0
    if args.log is None:
        raise ConfigError("give a LOG to summarise, or --schema")
    if args.seq is not None:
        return _show(args)
    report = ReadReport(path=args.log)
    # One streaming pass: the checks and the usage fold keep counts and ids, never the events.
    checker = LogChecker(RULES if not args.skip_bad else ())
    policies = PolicyChecker(policy_table(available_modes(args.modes_file)))
    warnings: list[str] = []
    projection = UsageProjection(get_tokenizer(args.tokenizer))
    state = projection.init()
    scaling = TokenScaleProjection()
    samples = scaling.init()
    large = is_large(args.log)
    total = count_lines(args.log) if large else None
    try:
        with progress(f"reading {args.log}", total, show=large) as update:
            for n, event in enumerate(read_log(args, report), start=1):
                checker.feed(event)
                state = projection.apply(state, event)
                samples = scaling.apply(samples, event)
                if (found := policies.feed(event)) is not None:
                    warnings.append(str(found))
                if n % 4096 == 0:
                    update(n)
    except LogFormatError as exc:
        if report.events:
            raise
        raise LogError(
            f"{args.log} is not a session log: line {exc.line}: {exc.reason} (a session log "
            "holds one JSON event a line; see harness log --schema)"
        ) from None
    checker.finish()
    if report.lines and not report.events:
        raise LogError(
            f"{args.log} is not a session log: none of its {report.lines} lines is an event"
        )
    usage = projection.view(state)
    scale = scaling.view(samples).scale(lambda seq: projection.tokens_of(state, seq))
    summary = {
        "path": args.log,
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
    }
    if args.json:
        print_json(summary)
        return 0
    out = console()
    table = Table(title=f"{args.log}: {report.events} events", title_justify="left")
    table.add_column("type")
    table.add_column("events", justify="right")
    table.add_column("tokens", justify="right")
    for kind, n in summary["events_by_type"].items():
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
    return 0


def _show(args: argparse.Namespace) -> int:
    """Print one event whole (see the module docstring)."""
    for event in read_log(args, ReadReport(path=args.log)):
        if event.seq != args.seq:
            continue
        if args.json:
            print_json(event.model_dump(mode="json", exclude_none=True))
        elif isinstance(event, MessageAdded):
            sys.stdout.write(event.data.text() + "\n")
        else:
            sys.stdout.write(dump_event(event) + "\n")
        return 0
    raise LogError(f"{args.log}: no event with seq {args.seq}")
