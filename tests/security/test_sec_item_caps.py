"""Issue 25, case 2: one todo item can no longer disable compaction for good.

Every built-in tool caps a single text (`MAX_ITEM_CHARS`) whatever the argument type; the 1 MB
argument cap holds for mappings too; a long item already in a log (written before the cap, or
imported) is clipped in the Checkpoint with its seq, so the carried list always fits; and the
LangChain middleware never crashes a run on ``does_not_fit``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compaction import CompactionPolicy, Session, TodoItem, TodoWriteData, call_tool, compact
from compaction.contract import MAX_ITEM_CHARS


def _todo(content: str) -> dict[str, Any]:
    return {"todos": [{"content": content, "status": "pending"}]}


def _as(kind: str, obj: dict[str, Any]) -> str | bytes | dict[str, Any]:
    if kind == "json":
        return json.dumps(obj)
    if kind == "bytes":
        return json.dumps(obj).encode()
    return obj


KINDS = ["json", "bytes", "mapping"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        ("todo_write", _todo("x" * 900_000), "todos[0].content is 900000 characters long"),
        ("todo_write", _todo("x" * (MAX_ITEM_CHARS + 1)), "todos[0].content is 2001 characters"),
        ("todo_write", _todo("x" * 2_000_000), "arguments are larger than 1000000 bytes"),
        (
            "task_create",
            {"subject": "s", "description": "d" * (MAX_ITEM_CHARS + 1)},
            "description is 2001 characters long",
        ),
        (
            "task_create",
            {"subject": "s", "description": "d" * 3_000_000},
            "arguments are larger than 1000000 bytes",
        ),
        ("task_create", {"subject": "s" * 1001}, "subject is longer than 1000 characters"),
        ("task_update", {"id": "1", "subject": "s" * 1001}, "subject is longer than 1000"),
    ],
)
def test_oversized_items_are_rejected_for_every_argument_type(
    kind: str, tool: str, arguments: dict[str, Any], problem: str, log_path: Path
) -> None:
    """A text over its cap, or arguments over 1 MB, are refused as JSON, bytes and mappings."""
    with Session(log_path) as session:
        session.task_create({"subject": "first"})
        before = session.applied_seq
        result = call_tool(session, tool, _as(kind, arguments))
        assert result.is_error
        assert problem in result.content
        assert result.content.startswith(f"{tool}: rejected, nothing was changed")
        assert len(result.content) < 400
        assert session.applied_seq == before


@pytest.mark.parametrize("kind", KINDS)
def test_an_item_at_the_cap_is_accepted(kind: str, log_path: Path) -> None:
    """Exactly `MAX_ITEM_CHARS` characters (after trimming) is still one valid item."""
    with Session(log_path) as session:
        text = "y" * MAX_ITEM_CHARS
        assert not session.todo_write(_as(kind, _todo(f"  {text}  "))).is_error
        assert session.latest_todos[0].content == text
        created = session.task_create(_as(kind, {"subject": "s", "description": text}))
        assert not created.is_error


def test_a_cyclic_mapping_is_refused_not_looped(log_path: Path) -> None:
    """A mapping that contains itself ends the size walk and is rejected as a bad list."""
    cyclic: dict[str, Any] = {"todos": []}
    cyclic["todos"].append(cyclic)
    with Session(log_path) as session:
        result = session.todo_write(cyclic)
        assert result.is_error
        assert session.applied_seq == 0


def _old_log_with_a_huge_item(path: Path, size: int) -> int:
    """Write a log whose list holds one huge item, as a log from before the cap would."""
    with Session(path) as session:
        session.start_turn("Fix the parser", mode="agent")
        event = session.append(
            TodoWriteData(
                todos=(
                    TodoItem(content="Z" * size, status="in_progress"),
                    TodoItem(content="Write the docs", status="pending"),
                )
            )
        )
        for i in range(30):
            session.add_message({"role": "assistant", "content": f"step {i}: " + "w " * 120})
        return event.seq


def test_a_huge_carried_item_is_clipped_with_its_seq(log_path: Path) -> None:
    """The Checkpoint keeps the head of an over-long item and names the seq that holds it."""
    seq = _old_log_with_a_huge_item(log_path, 900_000)
    policy = CompactionPolicy(window_tokens=32_000, threshold=0.5, retain=0.1)
    with Session(log_path) as session:
        result = compact(session, policy, force=True)
        checkpoint = result.checkpoint
    (current,) = checkpoint.current_work
    assert current.startswith("Z" * 1000)
    assert f"--seq {seq}" in current
    assert "900000 characters" in current
    assert len(current) < MAX_ITEM_CHARS
    assert checkpoint.pending_jobs == ("Write the docs",)


def test_an_item_at_the_cap_is_carried_verbatim(log_path: Path) -> None:
    """An item of exactly `MAX_ITEM_CHARS` characters is copied whole, not clipped."""
    _old_log_with_a_huge_item(log_path, MAX_ITEM_CHARS)
    policy = CompactionPolicy(window_tokens=32_000, threshold=0.5, retain=0.1)
    with Session(log_path) as session:
        checkpoint = compact(session, policy, force=True).checkpoint
    assert checkpoint.current_work == ("Z" * MAX_ITEM_CHARS,)


def test_compaction_keeps_working_after_a_huge_item(log_path: Path) -> None:
    """Repeated compactions of such a log all land (the old code failed with does_not_fit)."""
    _old_log_with_a_huge_item(log_path, 900_000)
    policy = CompactionPolicy(window_tokens=32_000, threshold=0.5, retain=0.1)
    with Session(log_path) as session:
        landed = 0
        for round_ in range(3):
            for i in range(20):
                session.add_message({"role": "assistant", "content": f"r{round_} {i} " * 60})
            compact(session, policy, force=True)
            landed += 1
        assert landed == 3
        assert session.context_tokens < policy.window_tokens


def test_langchain_run_survives_does_not_fit(tmp_path: Path) -> None:
    """A request that cannot fit is reported in `failures`; the model is still called."""
    pytest.importorskip("langchain")
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage

    from harness.integrations.langchain_agents import HarnessMiddleware

    log = tmp_path / "s.jsonl"
    with Session(log) as session:
        session.start_turn("Fix the parser", mode="agent")
        for i in range(30):
            session.add_message({"role": "assistant", "content": f"step {i}: " + "w " * 200})
    policy = CompactionPolicy(window_tokens=6000, threshold=0.5, retain=0.1)
    middleware = HarnessMiddleware(log, policy=policy, system_prompt="", fixed_tokens=7000)

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    model = Model(messages=iter([AIMessage(content="Done.")]))
    agent = create_agent(model=model, tools=[], middleware=[middleware])
    state = agent.invoke({"messages": [HumanMessage(content="Go on")]})
    assert state["messages"][-1].content == "Done."
    assert [f.code for f in middleware.failures] == ["does_not_fit"]
    assert middleware.compactions == []
