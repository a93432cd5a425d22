"""Peer: LangChain v1 `create_agent` with `TodoListMiddleware` and `SummarizationMiddleware`.

Variants: ``defaults`` (the middleware's defaults: keep the last 20 messages, trim the span to
summarize to its last 4,000 tokens), ``untrimmed`` (``trim_tokens_to_summarize=None``, so the
summarizer sees the whole span) and ``tail-tokens`` (keep a tail sized in message tokens like
ours: ``TAIL_SHARE * budget`` tokens of messages, untrimmed). All trigger at ``("tokens",
budget)`` on the whole request: the middleware counts the conversation, so its counter adds the
system message and tool specs of the latest model call (`whole_request_counter`), all with
o200k_base, so the budget means what it means for our strategies. The middleware measures its
``keep`` with that same counter, so ``tail-tokens`` adds the fixed prompt to it before each call
(`MessageTail`): the kept messages get ``TAIL_SHARE * budget`` tokens, as ours do, instead of
that less the ~2,000-token fixed prompt.
"""

from __future__ import annotations

from typing import Any, cast

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    SummarizationMiddleware,
    TodoListMiddleware,
)
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.matched import TAIL_SHARE
from benchmarks.peers.drivers._common import (
    Recorder,
    StepQueue,
    load_script,
    parse_args,
)
from benchmarks.peers.drivers._lc import (
    ScriptedChatModel,
    make_tools,
    run_turns,
    whole_request_counter,
)

VARIANTS: tuple[str, ...] = ("defaults", "untrimmed", "tail-tokens")
# ``tail-tokens`` keeps TAIL_SHARE of the budget: B's default retain of the window over the
# matched threshold (`benchmarks.matched`), so it follows B's default.


class MessageTail(AgentMiddleware[Any, Any, Any]):
    """Sizes `SummarizationMiddleware`'s ``keep`` in message tokens, as ours is.

    The middleware measures ``keep`` with its token counter, which here counts the whole request
    (`whole_request_counter`); before each model call this sets ``keep`` to `tail` plus the fixed
    prompt the model was last sent (the same figure that counter adds), so the kept messages get
    `tail` tokens. It runs before the summarization middleware's own ``before_model``.
    """

    def __init__(
        self, summarization: SummarizationMiddleware, tail: int, recorder: Recorder
    ) -> None:
        super().__init__()
        self.summarization, self.tail, self.recorder = summarization, tail, recorder

    def before_model(self, state: Any, runtime: Any) -> None:  # noqa: ANN401 - graph state
        """Set the tail for this call's check."""
        self.summarization.keep = ("tokens", self.tail + self.recorder.fixed_tokens())


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
    if args.variant in ("untrimmed", "tail-tokens"):
        options["trim_tokens_to_summarize"] = None
    tail = round(TAIL_SHARE * args.budget)
    if args.variant == "tail-tokens":
        options["keep"] = ("tokens", tail)
    summarization = SummarizationMiddleware(
        model=summary_model,
        trigger=("tokens", args.budget),
        token_counter=cast(Any, whole_request_counter(recorder)),
        **options,
    )
    middleware: list[AgentMiddleware[Any, Any, Any]] = [TodoListMiddleware()]
    if args.variant == "tail-tokens":
        middleware.append(MessageTail(summarization, tail, recorder))
    middleware.append(cast(AgentMiddleware[Any, Any, Any], summarization))
    agent = create_agent(
        model,
        tools=make_tools(script, str),
        system_prompt=script.system or None,
        middleware=middleware,
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
