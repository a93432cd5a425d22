"""Issue 25, case 14: two `todo_write` calls in one model response never lose a list silently.

Each such call is refused with a result telling the model to send one list per response, and
nothing is appended; a later response with one call goes through.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compaction import Session, TodoWritten, call_tool

FIRST = {"todos": [{"content": "Read the config", "status": "in_progress"}]}
SECOND = {"todos": [{"content": "Fix the parser", "status": "in_progress"}]}


def _assistant(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in calls
        ],
    }


def _result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _lists(session: Session) -> int:
    return sum(isinstance(e, TodoWritten) for e in session.events())


@pytest.mark.parametrize("calls", [2, 3])
def test_each_call_of_a_multi_call_response_is_refused(calls: int, log_path: Path) -> None:
    """Every todo_write of one response is refused, with the one-list rule; nothing appended."""
    with Session(log_path) as session:
        session.start_turn("Fix it", mode="agent")
        args = [FIRST, SECOND, FIRST][:calls]
        session.add_message(_assistant(*[(f"c{i}", "todo_write", a) for i, a in enumerate(args)]))
        before = session.applied_seq
        for i, a in enumerate(args):
            result = call_tool(session, "todo_write", json.dumps(a))
            assert result.is_error
            assert f"this response makes {calls} todo_write calls" in result.content
            assert "Send one todo_write call per response" in result.content
            session.add_message(_result(f"c{i}", result.content))
        assert _lists(session) == 0
        assert session.applied_seq == before + calls  # only the tool results were logged
        assert session.todos.todos == ()


def test_a_next_response_with_one_call_is_accepted(log_path: Path) -> None:
    """Once the refused calls are answered, a response with one call writes its list."""
    with Session(log_path) as session:
        session.start_turn("Fix it", mode="agent")
        session.add_message(_assistant(("a", "todo_write", FIRST), ("b", "todo_write", SECOND)))
        for call_id in ("a", "b"):
            refused = session.todo_write(FIRST)
            assert refused.is_error
            session.add_message(_result(call_id, refused.content))
        session.add_message(_assistant(("c", "todo_write", SECOND)))
        assert not session.todo_write(SECOND).is_error
        assert _lists(session) == 1
        assert session.latest_todos[0].content == "Fix the parser"


@pytest.mark.parametrize(
    "messages",
    [
        [_assistant(("a", "todo_write", FIRST))],
        [_assistant(("a", "todo_write", FIRST), ("b", "read_file", {"path": "x"}))],
        [
            _assistant(("a", "todo_write", FIRST), ("b", "todo_write", SECOND)),
            _result("a", "x"),
            _result("b", "y"),
        ],
        [
            _assistant(("a", "todo_write", FIRST), ("b", "todo_write", SECOND)),
            {"role": "user", "content": "go on"},
        ],
        [],
    ],
)
def test_one_call_per_response_is_not_refused(
    messages: list[dict[str, Any]], log_path: Path
) -> None:
    """A single call, another tool beside it, answered old calls, or no message: accepted."""
    with Session(log_path) as session:
        session.start_turn("Fix it", mode="agent")
        for m in messages:
            session.add_message(m)
        assert not session.todo_write(FIRST).is_error
        assert _lists(session) == 1


def test_langchain_two_calls_in_one_ai_message_are_both_refused(tmp_path: Path) -> None:
    """Through the LangChain middleware, both calls of one AI message get the refusal."""
    pytest.importorskip("langchain")
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from harness.integrations.langchain_agents import HarnessMiddleware

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    both = AIMessage(
        content="",
        tool_calls=[
            {"name": "todo_write", "args": FIRST, "id": "c1", "type": "tool_call"},
            {"name": "todo_write", "args": SECOND, "id": "c2", "type": "tool_call"},
        ],
    )
    model = Model(messages=iter([both, AIMessage(content="Done.")]))
    log = tmp_path / "s.jsonl"
    agent = create_agent(model=model, tools=[], middleware=[HarnessMiddleware(log)])
    state = agent.invoke({"messages": [HumanMessage(content="Fix it")]})
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert len(results) == 2
    for r in results:
        assert "this response makes 2 todo_write calls" in str(r.content)
    with Session(log) as session:
        assert _lists(session) == 0


def test_a_bad_call_beside_a_good_one_learns_its_fix(log_path: Path) -> None:
    """In one response, a bad call gets its argument errors and the good one the one-list rule."""
    bad = {"todos": [{"content": "x", "status": "done"}]}
    with Session(log_path) as session:
        session.start_turn("Fix it", mode="agent")
        session.add_message(_assistant(("a", "todo_write", FIRST), ("b", "todo_write", bad)))
        good = session.todo_write(FIRST)
        wrong = session.todo_write(bad)
        assert good.is_error
        assert "this response makes 2 todo_write calls" in good.content
        assert wrong.is_error
        assert "must be one of pending, in_progress, completed" in wrong.content
        assert _lists(session) == 0
