"""Properties of prompt assembly: determinism, stable layers, switch by message, injection."""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from strategies import event_payload_sequences, prompt_environments

from compaction import Session, TurnStartData
from prompts import (
    BUILTIN_MODES,
    TOOL_STRATEGIES,
    Environment,
    PromptBuilder,
    ToolCatalog,
    anthropic_request,
    dumps,
    load_tools,
    openai_request,
    switch_mode,
)
from prompts.rendering import literal

TOOLS = load_tools(
    Path(__file__).resolve().parents[2] / "prompts" / "examples" / "coding_tools.json"
)
modes = st.sampled_from(list(BUILTIN_MODES.values()))
strategies_ = st.sampled_from(TOOL_STRATEGIES)


def _builder(env: dict[str, Any], strategy: str) -> PromptBuilder:
    return PromptBuilder(
        ToolCatalog(TOOLS),
        # Hypothesis draws plain strings; the builder checks them at run time.
        strategy=strategy,  # type: ignore[arg-type]
        environment=Environment.model_validate(env),
    )


def _stable_head(request: dict[str, Any]) -> str:
    """The stable part of an OpenAI request: the system message and the tools."""
    return dumps({"system": request["messages"][0], "tools": request.get("tools")})


@given(env=prompt_environments, mode=modes, strategy=strategies_)
def test_rendering_is_deterministic(env: dict[str, Any], mode: Any, strategy: str) -> None:
    """Two builders from equal inputs render byte-identical prompts and requests."""
    a, b = _builder(env, strategy), _builder(dict(env), strategy)
    assert a.system_prompt(mode) == b.system_prompt(mode)
    assert dumps(openai_request(a, mode)) == dumps(openai_request(b, mode))
    assert dumps(anthropic_request(a, mode)) == dumps(anthropic_request(b, mode))


@given(payloads=event_payload_sequences, mode=modes, env=prompt_environments)
def test_stable_layers_identical_across_turns(
    payloads: list[Any], mode: Any, env: dict[str, Any]
) -> None:
    """At every turn start the system prompt and tools are the same bytes; messages only grow."""
    builder = _builder(env, "stable")
    requests: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, Session(Path(tmp) / "s.jsonl") as session:
        for payload in payloads:
            if isinstance(payload, TurnStartData):
                requests.append(openai_request(builder, mode, session))
            session.append(payload)
        requests.append(openai_request(builder, mode, session))
    heads = {_stable_head(r) for r in requests}
    assert len(heads) == 1
    for earlier, later in itertools.pairwise(requests):
        assert later["messages"][: len(earlier["messages"])] == earlier["messages"]
    system = {dumps(anthropic_request(builder, mode)["system"]) for _ in range(2)}
    assert len(system) == 1


@given(
    payloads=event_payload_sequences,
    switches=st.lists(st.tuples(st.integers(0, 40), modes), min_size=1, max_size=4),
    start=modes,
)
def test_switch_by_message_keeps_the_whole_prefix(
    payloads: list[Any], switches: list[tuple[int, Any]], start: Any
) -> None:
    """With mode messages, every request's serialized messages are a byte prefix of the next."""
    builder = _builder({"date": "2026-11-30", "cwd": "/repo"}, "stable")
    at = dict(switches)
    prompt_mode = start
    previous: str | None = None
    with tempfile.TemporaryDirectory() as tmp, Session(Path(tmp) / "s.jsonl") as session:
        for i, payload in enumerate(payloads):
            session.append(payload)
            if i in at:
                prompt_mode = switch_mode(session, builder, prompt_mode, at[i], how="message")
                assert prompt_mode == start
            request = openai_request(builder, prompt_mode, session)
            text = _stable_head(request) + dumps(request["messages"])
            if previous is not None:
                assert text.startswith(previous.removesuffix("]"))
            previous = text


@given(env=prompt_environments, mode=modes)
def test_values_never_run_as_template_code(env: dict[str, Any], mode: Any) -> None:
    """Every environment value appears as one JSON literal; no value adds a line or heading."""
    plain = _builder({}, "stable").system_prompt(mode)
    prompt = _builder(env, "stable").system_prompt(mode)
    assert prompt.startswith(plain.removesuffix("\n"))
    env_block = prompt[len(plain) :]
    values = [env["cwd"]] if env["cwd"] is not None else []
    values += list(env["variables"].values())
    for value in values:
        assert literal(value) in env_block
        assert json.loads(literal(value)) == value
    expected_lines = (env["date"] is not None) + (env["cwd"] is not None) + len(env["variables"])
    assert len(env_block.splitlines()) == (expected_lines + 4 if expected_lines else 0)
