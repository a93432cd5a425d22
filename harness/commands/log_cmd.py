"""`harness log LOG`: validate a log and summarise it; `harness log --schema`: the line schema."""

from __future__ import annotations

import argparse

from rich.table import Table

from compaction import (
    RULES,
    TOKENIZER_NAMES,
    ConfigError,
    LogChecker,
    ReadReport,
    UsageProjection,
    event_json_schema,
    get_tokenizer,
)
from harness.commands.stores import LOG_HELP, add_session_option, read_log
from harness.output import console, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `log` command."""
    p = sub.add_parser(
        "log",
        help="validate a log and summarise it",
        description=(
            "Read LOG, check its durable rules, and print events by type, tokens, and any torn or "
            "bad lines. Exits 2 on a malformed line unless --skip-bad is given. With --schema, "
            "print the JSON Schema of one log line instead (generated from the event models; "
            "compaction/schemas/event.schema.json is this output)."
        ),
    )
    p.add_argument("log", metavar="LOG", nargs="?", help=LOG_HELP)
    add_session_option(p)
    p.add_argument(
        "--schema", action="store_true", help="print the JSON Schema of a log line and exit"
    )
    p.add_argument("--skip-bad", action="store_true", help="count and skip malformed lines")
    p.add_argument("--tokenizer", default="o200k_base", choices=TOKENIZER_NAMES)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read, check and summarise the log (or print the schema)."""
    if args.schema:
        print_json(event_json_schema())
        return 0
    if args.log is None:
        raise ConfigError("give a LOG to summarise, or --schema")
    report = ReadReport(path=args.log)
    # One streaming pass: the checks and the usage fold keep counts and ids, never the events.
    checker = LogChecker(RULES if not args.skip_bad else ())
    projection = UsageProjection(get_tokenizer(args.tokenizer))
    state = projection.init()
    for event in read_log(args, report):
        checker.feed(event)
        state = projection.apply(state, event)
    checker.finish()
    usage = projection.view(state)
    summary = {
        "path": args.log,
        "lines": report.lines,
        "events": report.events,
        "events_by_type": dict(sorted(report.by_type.items())),
        "tokens_by_type": usage.tokens_by_type,
        "tokenizer": usage.tokenizer,
        "total_tokens": usage.total_tokens,
        "context_tokens": usage.context_tokens,
        "torn_line": report.torn_line,
        "bad_lines": [{"line": b.line, "reason": b.reason} for b in report.bad_lines],
        "provider_usage": {
            k: {**v.model_dump(), "cache_hit_share": v.cache_hit_share}
            for k, v in usage.provider_by_purpose.items()
        },
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
    return 0
