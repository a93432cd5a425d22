"""Property: a provider whose counts are a fixed multiple of ours is learned as that multiple."""

from __future__ import annotations

import statistics
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from strategies import provider_scaled_calls

from compaction import Session, UsageReportData


def reference_scale(prompts: list[int], counted: list[int]) -> float:
    """Plain Python: the median growth of the prompt per counted token between calls."""
    ratios = [
        (b - a) / (cb - ca)
        for a, b, ca, cb in zip(prompts, prompts[1:], counted, counted[1:], strict=False)
        if cb - ca >= 32 and b > a
    ]
    return statistics.median(ratios)


@settings(max_examples=25, deadline=None)
@given(provider_scaled_calls())
def test_learned_scale_is_the_provider_multiple(
    case: tuple[float, list[tuple[int, int]], bool],
) -> None:
    """Whatever the call sizes and the log's order, the learned scale is the provider's."""
    scale, calls, reply_first = case
    prompts: list[int] = []
    counted: list[int] = []
    with TemporaryDirectory() as tmp, Session(Path(tmp) / "s.jsonl") as session:
        session.start_turn("go")
        for i, (words, lines) in enumerate(calls):
            call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            reply = {"role": "assistant", "content": "word " * words, "tool_calls": [call]}
            if reply_first:
                shown = session.add_message(reply)
                context = session.context_tokens - session.event_tokens(shown.seq)
            else:
                context = session.context_tokens
            prompts.append(700 + round(scale * context))
            counted.append(context)
            session.append(UsageReportData(purpose="turn", model="m", prompt_tokens=prompts[-1],
                                           completion_tokens=1))  # fmt: skip
            if not reply_first:
                session.add_message(reply)
            session.add_message({"role": "tool", "tool_call_id": f"c{i}", "content": "x\n" * lines})
        learned = session.token_scale
    assert learned is not None
    assert abs(learned - scale) <= 0.02 * scale
    assert abs(learned - reference_scale(prompts, counted)) <= 1e-3
