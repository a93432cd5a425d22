"""Peer: LangChain v1 `create_agent` with `TodoListMiddleware` and `SummarizationMiddleware`.

Variants: ``defaults`` (the middleware's defaults: keep the last 20 messages, trim the span to
summarize to its last 4,000 tokens) and ``untrimmed`` (``trim_tokens_to_summarize=None``, so the
summarizer sees the whole span). Both trigger at ``("tokens", budget)``, counted with o200k_base
so the budget means what it means for our strategies.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware, TodoListMiddleware
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.peers.drivers._common import (
    Recorder,
    StepQueue,
    load_script,
    parse_args,
)
from benchmarks.peers.drivers._lc import ScriptedChatModel, count_tokens, make_tools, run_turns

VARIANTS: tuple[str, ...] = ("defaults", "untrimmed")


def main() -> None:
    """Replay one session through the agent and write the record."""
    args = parse_args()
    if args.variant not in VARIANTS:
        raise SystemExit(f"unknown variant {args.variant!r}; choose one of {VARIANTS}")
    script = load_script(args.session)
    queue = StepQueue(script)
    recorder = Recorder()
    model = ScriptedChatModel(queue=queue, recorder=recorder)
    summary_model = ScriptedChatModel(
        queue=queue, recorder=recorder, summarizer=args.summarizer, always_summarize=True
    )
    options: dict[str, Any] = {}
    if args.variant == "untrimmed":
        options["trim_tokens_to_summarize"] = None
    summarization = SummarizationMiddleware(
        model=summary_model, trigger=("tokens", args.budget), token_counter=count_tokens, **options
    )
    agent = create_agent(
        model,
        tools=make_tools(script, str),
        system_prompt=script.system or None,
        middleware=[TodoListMiddleware(), summarization],
        checkpointer=InMemorySaver(),
    )
    run_turns(
        agent,
        args,
        script,
        queue,
        recorder,
        peer="langchain-summarization",
        dists=("langchain", "langchain-core", "langgraph"),
    )


if __name__ == "__main__":
    main()
