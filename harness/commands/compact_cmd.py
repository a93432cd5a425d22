"""`harness compact LOG`: compact a session log into a Checkpoint.

Appends one ``compaction/checkpoint`` event (or, with ``--dry-run``, only prints it) and reports
the context tokens before and after. Below the policy's threshold it does nothing unless
``--force`` is given, and says so (exit 0). ``--summarizer openai`` has a model behind an
OpenAI-compatible endpoint write the narrative (see `harness.commands.llm_options`), falling back
to the extractive summarizer on any failure; the call's token usage is appended as a
``usage/report`` event. ``--instructions TEXT`` gives the summarizer a focus, recorded in the
event.
"""

from __future__ import annotations

import argparse
from typing import Any

from compaction import (
    DEFAULT_WINDOW,
    TOKENIZER_NAMES,
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    ExtractiveSummarizer,
    Session,
    Summarizer,
    compact,
    get_tokenizer,
)
from harness.commands import llm_options
from harness.commands.stores import LOG_HELP, add_session_option, open_session
from harness.output import console, print_json

SUMMARIZERS: tuple[str, ...] = ("extractive", "openai")
"""Names accepted by ``--summarizer``."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `compact` command."""
    p = sub.add_parser(
        "compact",
        help="compact a log's context into a Checkpoint",
        description=(
            "Replace the oldest part of LOG's context with a Checkpoint (a fixed template whose "
            "Pending Jobs and Current Work are copied from the latest todo list) and append a "
            "compaction/checkpoint event. Below the threshold nothing is done without --force."
        ),
    )
    p.add_argument("log", metavar="LOG", help=LOG_HELP)
    add_session_option(p)
    p.add_argument(
        "--window", type=int, default=DEFAULT_WINDOW, help="context window in tokens (%(default)s)"
    )
    p.add_argument(
        "--threshold", type=float, default=0.8, help="compact at this share of the window (0.8)"
    )
    p.add_argument(
        "--retain", type=float, default=0.16, help="keep at most this share verbatim (0.16)"
    )
    p.add_argument(
        "--reserve", type=int, default=0, help="tokens kept free for the model's reply (0)"
    )
    p.add_argument("--force", action="store_true", help="compact even below the threshold")
    p.add_argument("--dry-run", action="store_true", help="print the checkpoint, append nothing")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--instructions",
        metavar="TEXT",
        help="focus for the summarizer (appended to the LLM instruction; the extractive "
        "summarizer puts it under Critical Context); recorded in the event",
    )
    p.add_argument(
        "--summarizer",
        choices=SUMMARIZERS,
        default="extractive",
        help="what writes the narrative sections (%(default)s)",
    )
    p.add_argument("--tokenizer", default="o200k_base", choices=TOKENIZER_NAMES)
    llm_options.add_openai_options(p)
    p.set_defaults(func=run)


def make_summarizer(
    name: str, session: Session, args: argparse.Namespace | None = None
) -> Summarizer:
    """Return the summarizer chosen with ``--summarizer`` (openai needs the parsed `args`)."""
    if name == "extractive":
        return ExtractiveSummarizer(session.tokenizer)
    if name == "openai" and args is not None:
        return llm_options.openai_summarizer(args, session)
    raise ValueError(f"unknown summarizer {name!r}")


def result_json(result: CompactionResult, *, dry_run: bool) -> dict[str, Any]:
    """Return the JSON object `--json` prints for a compaction."""
    data = result.data
    return {
        "compacted": not dry_run,
        "dry_run": dry_run,
        "tokens_before": data.tokens_before,
        "tokens_after": data.tokens_after,
        "reduction": round(result.reduction, 4),
        "first_seq": data.first_seq,
        "last_seq": data.last_seq,
        "seq": result.event.seq if result.event else None,
        "replaced_messages": result.replaced_messages,
        "kept_messages": result.kept_messages,
        "summarizer": data.summarizer,
        "fallback_reason": data.fallback_reason,
        "instructions": data.instructions,
        "pending": list(data.pending),
        "current": list(data.current),
        "checkpoint": data.text,
    }


def run(args: argparse.Namespace) -> int:
    """Compact the log, or say why not."""
    policy = CompactionPolicy(
        window_tokens=args.window,
        threshold=args.threshold,
        retain=args.retain,
        output_reserve=args.reserve,
    )
    with open_session(args, tokenizer=get_tokenizer(args.tokenizer)) as session:
        summarizer = make_summarizer(args.summarizer, session, args)
        try:
            result = compact(
                session,
                policy,
                summarizer=summarizer,
                force=args.force,
                dry_run=args.dry_run,
                instructions=args.instructions,
            )
        except CompactionError as exc:
            if exc.code != "below_threshold":
                raise
            return _below(args, session.context_tokens, policy, str(exc))
        usage = llm_options.finish(summarizer, session, dry_run=args.dry_run)
    if args.json:
        print_json(result_json(result, dry_run=args.dry_run) | {"summary_usage": usage})
        return 0
    _report(result, dry_run=args.dry_run)
    for report in usage:
        console().print(llm_options.usage_line(report), markup=False)
    return 0


def _below(args: argparse.Namespace, tokens: int, policy: CompactionPolicy, why: str) -> int:
    if args.json:
        print_json(
            {
                "compacted": False,
                "reason": "below_threshold",
                "tokens_before": tokens,
                "tokens_after": tokens,
                "trigger_tokens": policy.trigger_tokens,
                "message": why,
            }
        )
    else:
        console().print(f"nothing to do: {why.removeprefix('below_threshold: ')}")
    return 0


def _report(result: CompactionResult, *, dry_run: bool) -> None:
    data = result.data
    out = console()
    if dry_run:
        out.print(data.text, end="", markup=False)
        out.print()
    verb = "would replace" if dry_run else "replaced"
    out.print(
        f"{verb} seqs {data.first_seq}..{data.last_seq} ({result.replaced_messages} messages, "
        f"{result.kept_messages} kept verbatim) with a checkpoint by {data.summarizer}",
        markup=False,
    )
    out.print(
        f"context tokens: {data.tokens_before} -> {data.tokens_after} "
        f"(-{result.reduction:.1%})" + (" [dry run: nothing appended]" if dry_run else ""),
        markup=False,
    )
    out.print(
        f"carried by code: {len(data.pending)} pending, {len(data.current)} in progress",
        markup=False,
    )
    if data.fallback_reason:
        out.print(f"fallback: {data.fallback_reason}", markup=False)
