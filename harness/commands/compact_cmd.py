"""`harness compact LOG`: compact a session log into a Checkpoint.

The whole request counts: the system prompt and tool catalog the options describe (``--mode``,
default the latest turn's; ``--tools-file``, ``--date``, ``--cwd``, ``--var``: the request
`harness context` prints), the log's context view and ``--reserve``. Appends one
``compaction/checkpoint`` event (or, with ``--dry-run``, only prints it) and reports the request
tokens before and after, by part. Below the policy's threshold it does nothing unless
``--force`` is given, and says so (exit 0). ``--summarizer openai`` has a model behind an
OpenAI-compatible endpoint write the narrative (see `harness.commands.llm_options`), falling back
to the extractive summarizer on any failure; the call's token usage is appended as a
``usage/report`` event. ``--instructions TEXT`` gives the summarizer a focus, recorded in the
event.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from compaction import (
    DEFAULT_BOUNDARY,
    DEFAULT_WINDOW,
    CheckpointData,
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    ConfigError,
    ExtractiveSummarizer,
    LogFormatError,
    Session,
    Summarizer,
    TaskRef,
    compact,
    get_tokenizer,
)
from compaction.stores import FileStore
from harness.commands import backend_options, llm_options
from harness.commands.env_options import add_tokenizer_option, env_value, with_env
from harness.commands.prompt_cmd import builder_from_args
from harness.commands.stores import (
    add_log_argument,
    add_session_option,
    not_a_log,
    open_session,
)
from harness.output import (
    HelpFormatter,
    cli_text,
    console,
    examples,
    is_large,
    print_json,
    progress,
)
from harness.plain import positive_int
from prompts import RequestSize, available_modes, get_mode, request_size

SUMMARIZERS: tuple[str, ...] = ("extractive", "openai")
"""Names accepted by ``--summarizer``."""

POLICY_OPTIONS = {
    "window_tokens": "--window",
    "threshold": "--threshold",
    "retain": "--retain",
    "output_reserve": "--reserve",
    "boundary_threshold": "--boundary",
}
"""The `CompactionPolicy` field each option sets, to name the option in an error."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `compact` command."""
    p = sub.add_parser(
        "compact",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness compact s.jsonl --window 32000",
            "harness compact s.jsonl --force --dry-run --json",
            "harness compact s.jsonl --backend openai-responses --model gpt-5.2",
        ),
        help="compact a log's context into a Checkpoint",
        description=(
            "Replace the oldest part of LOG's context with a Checkpoint (a fixed template whose "
            "Pending Jobs and Current Work are copied from the latest todo list) and append a "
            "compaction/checkpoint event. The whole request counts: the system prompt and tool "
            "catalog of --mode/--tools-file (as `harness context` builds them), the context "
            "and --reserve. Below the threshold nothing is done without --force."
        ),
    )
    add_log_argument(p)
    add_session_option(p)
    _add_budget_options(p)
    p.add_argument("--force", action="store_true", help="compact even below the threshold")
    p.add_argument("--dry-run", action="store_true", help="print the checkpoint, append nothing")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_summarizer_options(p)
    p.set_defaults(func=run)


def _add_budget_options(p: argparse.ArgumentParser) -> None:
    """Add the options that say when to compact and how much to keep."""
    p.add_argument(
        "--window",
        type=int,
        default=env_value("HARNESS_WINDOW", positive_int, DEFAULT_WINDOW),
        help=with_env("context window in tokens (%(default)s)", "HARNESS_WINDOW"),
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=CompactionPolicy().threshold,
        help="compact when the whole request reaches this share of the window (%(default)s)",
    )
    p.add_argument(
        "--retain",
        type=float,
        default=CompactionPolicy().retain,
        help="keep at most this share verbatim (%(default)s)",
    )
    p.add_argument(
        "--reserve", type=int, default=0, help="tokens kept free for the model's reply (0)"
    )
    p.add_argument(
        "--boundary",
        type=_boundary,
        default="auto",
        metavar="SHARE|auto|none",
        help=(
            "also compact right after a todo item or task was completed (since the last model "
            f"call) once the request holds this share of the window; auto: {DEFAULT_BOUNDARY:g} "
            "where that is valid, none: the threshold alone (%(default)s)"
        ),
    )


def _boundary(text: str) -> float | str | None:
    """Parse ``--boundary``: a share, ``auto`` or ``none`` (a bad share is named at policy time)."""
    low = text.strip().lower()
    if low in ("auto", "none"):
        return None if low == "none" else "auto"
    try:
        return float(low)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share, 'auto' or 'none'") from None


def _add_summarizer_options(p: argparse.ArgumentParser) -> None:
    """Add the options that choose and steer the summarizer."""
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
    add_tokenizer_option(p)
    llm_options.add_openai_options(p)
    backend_options.add_backend_options(p)


def make_summarizer(
    name: str, session: Session, args: argparse.Namespace | None = None
) -> Summarizer:
    """Return the summarizer chosen with ``--summarizer`` (openai needs the parsed `args`)."""
    if name == "extractive":
        return ExtractiveSummarizer(session.tokenizer)
    if name == "openai" and args is not None:
        return llm_options.openai_summarizer(args, session)
    raise ValueError(f"unknown summarizer {name!r}")


def request_json(size: RequestSize, context_after: int, policy: CompactionPolicy) -> dict[str, Any]:
    """Return the request's parts in tokens: fixed (system prompt + tools) and context."""
    return {
        "request_tokens_before": size.total,
        "request_tokens_after": size.fixed + context_after,
        "fixed_tokens": size.fixed,
        "system_prompt_tokens": size.system,
        "tool_catalog_tokens": size.tools,
        "output_reserve": policy.output_reserve,
        "window_tokens": policy.window_tokens,
        "trigger_tokens": policy.trigger_tokens,
    }


def result_json(result: CompactionResult, *, dry_run: bool) -> dict[str, Any]:
    """Return the JSON object `--json` prints for a compaction (context tokens in `tokens_*`)."""
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
        "narrative_left_out": data.narrative_left_out,
        "instructions": data.instructions,
        "pending": list(data.pending),
        "current": list(data.current),
        "pending_tasks": task_rows(data.pending_tasks or (), "pending"),
        "current_tasks": task_rows(data.current_tasks or (), "in_progress"),
        "jobs": [j.model_dump(mode="json") for j in data.jobs or ()],
        "plan": data.plan.model_dump(mode="json") if data.plan is not None else None,
        "checkpoint": data.text,
    }


def task_rows(tasks: Sequence[TaskRef], status: str) -> list[dict[str, Any]]:
    """Return the shared tasks a Checkpoint carries as JSON rows (id, subject, owner, ...)."""
    return [
        {
            "id": t.id,
            "subject": t.subject,
            "owner": t.owner,
            "status": status,
            "blocked_by": list(t.blocked_by),
        }
        for t in tasks
    ]


def carried_line(data: CheckpointData) -> str:
    """Return the report line of what code carried: todo items, then shared tasks if any."""
    line = f"carried by code: {len(data.pending)} pending, {len(data.current)} in progress todos"
    if data.pending_tasks or data.current_tasks:
        pending, current = len(data.pending_tasks or ()), len(data.current_tasks or ())
        line += f"; {pending} pending, {current} in progress tasks"
    if data.jobs:
        line += f"; {len(data.jobs)} running jobs"
    if data.plan is not None:
        line += (
            f"; the approved plan (seq {data.plan.seq}{', clipped' if data.plan.clipped else ''})"
        )
    return line


def _policy(args: argparse.Namespace) -> CompactionPolicy:
    """Return the policy the options give, an invalid one named by its options."""
    try:
        return CompactionPolicy(
            window_tokens=args.window,
            threshold=args.threshold,
            retain=args.retain,
            output_reserve=args.reserve,
            boundary_threshold=args.boundary,
        )
    except ConfigError as exc:
        text = str(exc).removeprefix("invalid CompactionPolicy: ")
        raise ConfigError(cli_text(text, POLICY_OPTIONS)) from None


def run(args: argparse.Namespace) -> int:
    """Compact the log, or say why not; a file whose first line is no event is not a log."""
    try:
        return _run(args)
    except LogFormatError as exc:
        if exc.line != 1:
            raise
        raise not_a_log(args.log, f"line 1: {exc.reason}") from None


def _run(args: argparse.Namespace) -> int:
    policy = _policy(args)
    busy = progress(f"compacting {args.log}", show=is_large(args.log))
    with busy, open_session(args, tokenizer=get_tokenizer(args.tokenizer)) as session:
        _check_is_a_log(args.log, session)
        mode = get_mode(
            args.mode or llm_options.session_mode(session), available_modes(args.modes_file)
        )
        size = request_size(builder_from_args(args), mode, session)
        summarizer = make_summarizer(args.summarizer, session, args)
        backend = backend_options.backend_from_args(args)
        try:
            result = compact(
                session,
                policy,
                summarizer=summarizer,
                force=args.force,
                dry_run=args.dry_run,
                instructions=args.instructions,
                fixed_tokens=size.fixed,
                backend=backend,
            )
        except CompactionError as exc:
            if exc.code != "below_threshold":
                raise
            return _below(args, size, policy, str(exc))
        usage = llm_options.finish(summarizer, session, dry_run=args.dry_run)
    if args.json:
        request = request_json(size, result.tokens_after, policy)
        backend_json = backend_options.backend_json(result)
        print_json(
            result_json(result, dry_run=args.dry_run)
            | request
            | {"summary_usage": usage}
            | backend_json
        )
        return 0
    _report(result, dry_run=args.dry_run)
    for report in usage:
        console().print(llm_options.usage_line(report), markup=False)
    return 0


def _check_is_a_log(log: str, session: Session) -> None:
    """Refuse a non-empty file in which not one event was read (a binary or foreign file)."""
    store = session.store
    if session.applied_seq or not isinstance(store, FileStore):
        return
    size = store.path.stat().st_size if store.path.exists() else 0
    if size:
        raise not_a_log(log, f"{size} bytes and no event")


def _below(args: argparse.Namespace, size: RequestSize, policy: CompactionPolicy, why: str) -> int:
    if args.json:
        print_json(
            {
                "compacted": False,
                "reason": "below_threshold",
                "tokens_before": size.context,
                "tokens_after": size.context,
                "message": cli_text(why),
            }
            | request_json(size, size.context, policy)
        )
    else:
        console().print(f"nothing to do: {cli_text(why.removeprefix('below_threshold: '))}")
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
        f"request tokens: {result.request_tokens_before} -> {result.request_tokens_after} "
        f"({result.fixed_tokens} fixed + context {data.tokens_before} -> {data.tokens_after}, "
        f"{-result.reduction:+.1%})" + (" [dry run: nothing appended]" if dry_run else ""),
        markup=False,
    )
    out.print(carried_line(data), markup=False)
    if data.fallback_reason:
        out.print(f"fallback: {data.fallback_reason}", markup=False)
    if data.narrative_left_out:
        out.print(f"narrative left empty: {data.narrative_left_out}", markup=False)
    backend = backend_options.backend_line(result)
    if backend:
        out.print(backend, markup=False)
