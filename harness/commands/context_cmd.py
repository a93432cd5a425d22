"""`harness context LOG --mode M`: the whole request the model would receive now.

``--remind [N]`` first records the stale-list reminder due now (`compaction.remind_if_stale`:
a list with unfinished items and N assistant messages, default 10, since it was written), as a
host does before each model call; the request printed then ends with it. A reminder recorded
earlier is a message of the log, so it shows with or without the flag.

A tool call the log left without a result (a process killed inside it) is answered first, as a
host resuming the session does (`compaction.Session.answer_open_calls`): a placeholder error
result is recorded once in the log, so the printed request is one a provider accepts and every
later request holds the same bytes.
"""

from __future__ import annotations

import argparse
import sys

from compaction import Message, Session, TurnStarted, remind_if_stale
from compaction.compactor import REMIND_AFTER
from harness.commands.prompt_cmd import (
    FORMATS,
    LOG_MODE_DEFAULT,
    add_prompt_options,
    builder_from_args,
)
from harness.commands.stores import add_log_argument, add_session_option, open_session
from harness.output import HelpFormatter, examples
from prompts import (
    anthropic_request,
    available_modes,
    dumps,
    get_mode,
    openai_request,
    responses_request,
)

CONTEXT_FORMATS: tuple[str, ...] = (*FORMATS, "responses")
"""``--format`` choices: the prompt formats plus OpenAI's Responses API."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `context` command."""
    p = sub.add_parser(
        "context",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness context s.jsonl",
            "harness context s.jsonl --format anthropic --max-tokens 4096",
            "harness context s.jsonl --format text --remind",
            "harness context s.jsonl --format responses --model gpt-5.2",
        ),
        help="print the request the model would receive now, from a log",
        description=(
            "Build the request for the next model call from LOG's context view (checkpoint and "
            "kept messages) under a mode: text (system prompt, then the messages), openai "
            "(chat completions), anthropic (messages API) or responses (OpenAI Responses API). "
            "After a provider compaction, that provider's format carries its opaque item and "
            "the code-owned sections; every other format carries the local Checkpoint."
        ),
    )
    add_log_argument(p)
    add_session_option(p)
    add_prompt_options(p, mode_default=LOG_MODE_DEFAULT)
    p.add_argument(
        "--format", choices=CONTEXT_FORMATS, default="openai", help="output format (openai)"
    )
    p.add_argument(
        "--json", action="store_true", help="print JSON: the openai request unless --format says"
    )
    p.add_argument("--model", help="model name to put in the request")
    p.add_argument("--max-tokens", type=int, help="max_tokens for an anthropic request")
    p.add_argument("--skip-bad", action="store_true", help="skip malformed lines of the log")
    p.add_argument(
        "--remind",
        type=int,
        nargs="?",
        const=REMIND_AFTER,
        metavar="N",
        help="first record the stale-list reminder due after N assistant messages without a "
        f"write (default {REMIND_AFTER}), as a host does before each call",
    )
    p.set_defaults(func=run)


def _last_mode(session: Session) -> str | None:
    """Return the mode of the latest turn/start that names one."""
    mode: str | None = None
    for event in session.events():
        if isinstance(event, TurnStarted) and event.data.mode:
            mode = event.data.mode
    return mode


def run(args: argparse.Namespace) -> int:
    """Print the request."""
    with open_session(args, sync="batch", skip_bad_lines=args.skip_bad) as session:
        session.answer_open_calls()
        if args.remind is not None:
            remind_if_stale(session, after=args.remind)
        return _print(args, session)


def _print(args: argparse.Namespace, session: Session) -> int:
    """Print the request built from an open session."""
    builder = builder_from_args(args)
    modes = available_modes(args.modes_file)
    mode = get_mode(args.mode or _last_mode(session) or "agent", modes)
    if args.json and args.format == "text":
        args.format = "openai"
    if args.format == "openai":
        request = openai_request(builder, mode, session, model=args.model)
        sys.stdout.write(dumps(request, indent=2) + "\n")
    elif args.format == "responses":
        request = responses_request(builder, mode, session, model=args.model)
        sys.stdout.write(dumps(request, indent=2) + "\n")
    elif args.format == "anthropic":
        request = anthropic_request(
            builder, mode, session, model=args.model, max_tokens=args.max_tokens
        )
        sys.stdout.write(dumps(request, indent=2) + "\n")
    else:
        sys.stdout.write(builder.system_prompt(mode) + "\n")
        window = session.context
        for message in window.as_messages():
            sys.stdout.write("\n" + _message_text(message))
    return 0


def _message_text(message: Message) -> str:
    """Render one message for reading: a header line, its text, then its tool calls."""
    header = f"--- {message.role}"
    if message.origin == "reminder":
        header += " (reminder)"
    if message.tool_call_id:
        header += f" ({message.tool_call_id})"
    lines = [header + " ---"]
    if message.text():
        lines.append(message.text())
    for call in message.tool_calls or ():
        lines.append(f"[call {call.id}] {call.function.name} {call.function.arguments}")
    return "\n".join(lines) + "\n"
