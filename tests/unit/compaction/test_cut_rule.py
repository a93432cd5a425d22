"""The cut rule has one home, `separating_ends`, asked by the planner and by the log checker."""

from __future__ import annotations

import pytest

from compaction.cuts import separating_ends, unsafe_cuts
from compaction.events import FunctionCall, Message, ToolCall

CALL = ToolCall(id="c1", function=FunctionCall(name="t", arguments="{}"))


class TestSeparatingEnds:
    @pytest.mark.parametrize(
        ("call", "result", "end", "separates"),
        [
            (3, 5, 2, False),  # the span ends before the call
            (3, 5, 3, True),  # the call is replaced, its result kept
            (3, 5, 4, True),
            (3, 5, 5, False),  # both replaced
            (3, 4, 3, True),
        ],
    )
    def test_boundaries(self, call: int, result: int, end: int, separates: bool) -> None:
        """A span ending at `end` separates the pair exactly when call <= end < result."""
        assert (end in separating_ends(call, result)) is separates

    def test_planner_and_checker_agree(self) -> None:
        """unsafe_cuts forbids exactly the cuts whose span end separates a pair."""
        msgs = [
            Message(role="user", content="go"),
            Message(role="assistant", content="", tool_calls=(CALL,)),
            Message(role="tool", content="r", tool_call_id="c1"),
            Message(role="assistant", content="done"),
        ]
        # position k replaces messages[:k]: the span ends at k - 1
        assert unsafe_cuts(msgs) == [k - 1 in separating_ends(1, 2) for k in range(5)]
