"""Peer: deepagents' `create_deep_agent` as shipped, plus the todo tool it no longer bundles.

deepagents 0.7 dropped `TodoListMiddleware` from its default stack (its Codex profile adds it back),
so the driver passes it in `middleware`, as that profile does.

deepagents summarizes with the agent's own model, so the scripted model answers tool-less calls
with the fake summarizer. Its summarization thresholds come from the model profile: with
``max_input_tokens`` set it triggers at 85% and keeps 10%, so the profile is set to
``budget / 0.85`` to trigger at the same budget as everyone else. deepagents counts the whole
request (system message, tool specs, messages); its factory's ``token_counter`` is set to the
benchmark's o200k_base counter (`count_request`) where `create_deep_agent` builds it, so the
budget is counted as ours. Session tools whose names clash with deepagents' built-in tools get a
``session_`` prefix.
"""

from __future__ import annotations

import functools

import deepagents.graph
from deepagents import create_deep_agent
from deepagents.middleware.summarization import create_summarization_middleware
from langchain.agents.middleware import TodoListMiddleware
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.peers.drivers._common import (
    Recorder,
    StepQueue,
    load_script,
    parse_args,
)
from benchmarks.peers.drivers._lc import ScriptedChatModel, count_request, make_tools, run_turns

BUILTIN_TOOLS = frozenset(
    {
        "delete",
        "edit_file",
        "execute",
        "glob",
        "grep",
        "ls",
        "read_file",
        "task",
        "write_file",
        "write_todos",
    }
)
TRIGGER_FRACTION = 0.85
"""deepagents' default trigger when the model profile states `max_input_tokens`."""


def rename(name: str) -> str:
    """Prefix a session tool name that clashes with a deepagents built-in."""
    return f"session_{name}" if name in BUILTIN_TOOLS else name


def main() -> None:
    """Replay one session through the deep agent and write the record."""
    args = parse_args()
    # The factory's token_counter argument, set where create_deep_agent calls it.
    deepagents.graph.create_summarization_middleware = functools.partial(
        create_summarization_middleware, token_counter=count_request
    )
    script = load_script(args.session)
    queue = StepQueue(script)
    recorder = Recorder()
    model = ScriptedChatModel(
        queue=queue,
        recorder=recorder,
        summarizer=args.summarizer,
        rename=rename,
        profile={"max_input_tokens": round(args.budget / TRIGGER_FRACTION)},
    )
    agent = create_deep_agent(
        model=model,
        tools=make_tools(script, rename),
        system_prompt=script.system or None,
        middleware=[TodoListMiddleware()],
        checkpointer=InMemorySaver(),
    )
    run_turns(
        agent,
        args,
        script,
        queue,
        recorder,
        peer="deepagents",
        dists=("deepagents", "langchain", "langchain-core", "langgraph"),
    )


if __name__ == "__main__":
    main()
