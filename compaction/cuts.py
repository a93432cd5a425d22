"""The cut rule: where a compaction may end the span it replaces.

Position k means ``messages[:k]`` are replaced by the Checkpoint and ``messages[k:]`` are kept
verbatim. A cut is allowed (`cut_points`) when it starts a complete step:

- just before a user message (a turn boundary);
- just before an assistant message once every tool call made before it has its result before
  it, so a cut may fall inside one long turn, between two tool rounds, and the latest rounds
  stay verbatim;
- after the last message (everything is summarized, the tail is empty);

and it never separates a tool call from its result (`unsafe_cuts`): no call before the cut is
answered after it, and no call of the last assistant message is still waiting for its result (a
call in an earlier message that was never answered is taken as abandoned).

So the kept tail never opens with a tool result, and never holds a result without its call: the
request after the Checkpoint's user message is valid for OpenAI chat completions and, once
consecutive same-role messages merge, alternates roles as Anthropic requires.

Of the allowed cuts, `select_cut` takes the one that keeps the longest tail within the retain
budget. When none fits, it keeps the latest step (the shortest non-empty allowed tail, as the
context shows it: a huge tool result is already clipped there,
`compaction.views.clipping`) if it fits
the room the request has beside the Checkpoint; only when even that does not fit, the shortest
tail (empty after the last message). Retain is a target for the tail, the room is the limit: a
latest step a little over retain stays verbatim rather than leaving the model nothing.

Invariants: a cut never splits a call from its result (also checked on replay by
`compaction.invariants.check_checkpoint_cut`); the kept tail opens with a user or an assistant
message; when some non-empty allowed tail fits the room, the tail kept is non-empty and fits it
(`tests/property/test_cut_room_props.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from compaction.errors import CompactionError
from compaction.events import Message


def separating_ends(call: int, result: int) -> range:
    """The cut rule, in its one home: the span ends that separate a tool call from its result.

    A span that ends at `end` (its last replaced position, or seq) separates a call at `call`
    from its result at `result` exactly when ``call <= end < result``. `unsafe_cuts` (planning a
    cut, over positions) and `compaction.invariants.LogChecker` (checking a log, over seqs) both
    ask this function.
    """
    return range(call, result)


def unsafe_cuts(messages: Sequence[Message]) -> list[bool]:
    """Return, for each cut position 0..n, whether it would split a tool call from its result.

    Position k means ``messages[:k]`` are replaced and ``messages[k:]`` kept: the span ends at
    position k - 1 (`separating_ends`).
    """
    n = len(messages)
    calls: dict[str, int] = {}
    delta = [0] * (n + 2)

    def forbid(ends: range) -> None:
        delta[ends.start + 1] += 1
        delta[ends.stop + 1] -= 1

    for i, message in enumerate(messages):
        if message.role == "tool" and message.tool_call_id in calls:
            forbid(separating_ends(calls.pop(message.tool_call_id), i))
        for call in message.tool_calls or ():
            calls[call.id] = i
    last_assistant = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    for start in calls.values():
        if start == last_assistant:
            forbid(separating_ends(start, n))  # still waiting for its result: no cut after it
    unsafe, depth = [], 0
    for k in range(n + 1):
        depth += delta[k]
        unsafe.append(depth > 0)
    return unsafe


def cut_points(messages: Sequence[Message]) -> list[int]:
    """Return the allowed cut positions k >= 1, in increasing order (see the module docstring)."""
    n = len(messages)
    unsafe = unsafe_cuts(messages)
    return [
        k
        for k in range(1, n + 1)
        if not unsafe[k] and (k == n or messages[k].role in ("user", "assistant"))
    ]


def select_cut(
    messages: Sequence[Message],
    tokens: Sequence[int],
    retain_tokens: int,
    room_tokens: int | None = None,
) -> int:
    """Return the cut position k (replace ``messages[:k]``, keep the rest); k >= 1.

    Of the allowed cuts (`cut_points`), the smallest whose tail fits `retain_tokens` wins, so
    the tail is the longest that fits. When none fits: the latest step (the largest allowed cut
    that keeps a message) if its tail fits `room_tokens`, the tokens the request has beside the
    Checkpoint (None: no room is known, so retain is the limit); else the largest cut (the
    shortest tail).

    Raises:
        CompactionError: ``nothing_to_compact`` with no message, ``no_safe_cut`` with no allowed
            cut.
    """
    if not messages:
        raise CompactionError("nothing_to_compact", "no message since the last checkpoint")
    candidates = cut_points(messages)
    if not candidates:
        raise CompactionError(
            "no_safe_cut",
            "every cut would split a tool call from its result or keep an answer without its "
            "request; append the pending tool results, then compact",
        )
    tail = tail_tokens(tokens)
    steps = [k for k in candidates if k < len(messages)]  # the cuts that keep a message
    fitting = [k for k in steps if tail[k] <= retain_tokens]
    if fitting:
        return fitting[0]
    if steps and room_tokens is not None and tail[steps[-1]] <= room_tokens:
        return steps[-1]  # the latest step, over retain but within the room
    return candidates[-1]


def tail_tokens(tokens: Sequence[int]) -> list[int]:
    """Return, for each cut position 0..n, the tokens of the tail it would keep."""
    tail = [0] * (len(tokens) + 1)
    for i in range(len(tokens) - 1, -1, -1):
        tail[i] = tail[i + 1] + tokens[i]
    return tail


__all__ = [
    "cut_points",
    "select_cut",
]
