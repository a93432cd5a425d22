from __future__ import annotations

import json

from compaction import (
    Checkpoint,
    Message,
    TodoItem,
    TodoStatus,
    TodoWriteData,
    render_checkpoint,
)
from compaction.views import checkpoint_preamble
from harness.simulation import BASELINE, STRATEGIES, SWITCH_VARIANTS, TODO_STRATEGIES, generate
from harness.simulation._context_strategies import render_todos, retained, visible_todos

ITEMS = (
    TodoItem(content="Read the parser", status="completed"),
    TodoItem(content="Fix the bug", status="in_progress"),
    TodoItem(content="Run the tests", status="pending"),
)


def call(todos, call_id="c1"):
    args = json.dumps({"todos": [t.model_dump() for t in todos]})
    return {
        "role": "assistant",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "todo_write", "arguments": args},
            }
        ],
    }


class TestCatalogue:
    def test_names(self):
        """A, B, C, the switch variants and the baseline are all defined."""
        assert set(TODO_STRATEGIES) | set(SWITCH_VARIANTS.values()) | {BASELINE} <= set(STRATEGIES)
        assert not STRATEGIES[BASELINE].compaction
        assert STRATEGIES["B"].switch == "message"  # the default: a mode switch appends
        assert STRATEGIES["switch:rebuild"].switch == "rebuild"
        assert STRATEGIES["switch:rebuild+filtered"].switch == "rebuild"
        assert STRATEGIES["switch:rebuild+filtered"].tools == "filtered"


class TestTransform:
    def test_b_and_c_keep_the_log(self):
        """B and C replay the session's payloads unchanged."""
        payloads = generate(3, 0)
        assert STRATEGIES["B"].transform(payloads) == payloads
        assert STRATEGIES["C"].transform(payloads) == payloads

    def test_a_echoes_the_list_and_drops_todo_events(self):
        """A has no todo/write events; each todo_write result shows the whole list."""
        payloads = generate(3, 0)
        out = STRATEGIES["A"].transform(payloads)
        assert not any(isinstance(p, TodoWriteData) for p in out)
        writes = [p for p in payloads if isinstance(p, TodoWriteData)]
        echoes = [
            p for p in out if isinstance(p, Message) and p.text().startswith("Updated todo list")
        ]
        assert len(echoes) == len(writes)
        first = writes[0].todos
        assert echoes[0].text() == render_todos("todo_message.md.j2", first)
        assert f"- [in_progress] {first[0].content}" in echoes[0].text()

    def test_c_suffix_lists_every_item(self):
        """C's system block holds every item with its status; other strategies add nothing."""
        suffix = STRATEGIES["C"].system_suffix(ITEMS)
        assert suffix is not None
        assert "- [pending] Run the tests" in suffix
        assert STRATEGIES["B"].system_suffix(ITEMS) is None
        assert "(empty)" in (STRATEGIES["C"].system_suffix(()) or "")


class TestVisibleTodos:
    def test_latest_call_wins(self):
        """The last todo_write call in the request is the list the model sees."""
        later = (TodoItem(content="Fix the bug", status="completed"),)
        seen = visible_todos([{"role": "user", "content": "x"}, call(ITEMS), call(later, "c2")])
        assert seen == {"Fix the bug": "completed"}

    def test_checkpoint_sections(self):
        """A checkpoint shows Pending Jobs as pending and Current Work as in progress."""
        text = render_checkpoint(
            Checkpoint(pending_jobs=("Run the tests",), current_work=("Fix the bug",))
        )
        msg = {"role": "user", "content": checkpoint_preamble() + text}
        seen = visible_todos([msg])
        assert seen == {"Run the tests": "pending", "Fix the bug": "in_progress"}
        assert retained(ITEMS[1:], seen) == 2

    def test_system_block_is_current(self):
        """A list injected into the system prompt overrides older calls."""
        system = {
            "role": "system",
            "content": "Be good.\n\n" + render_todos("todo_system.md.j2", ITEMS),
        }
        seen = visible_todos([system, call((TodoItem(content="Old", status="pending"),))])
        assert seen == {t.content: t.status for t in ITEMS}

    def test_wrong_status_is_not_retained(self):
        """An item visible at an older status does not count."""
        seen: dict[str, TodoStatus] = {"Fix the bug": "pending", "Run the tests": "pending"}
        assert retained(ITEMS[1:], seen) == 1

    def test_other_agents_lists_are_read(self):
        """Codex's update_plan (plan of steps) and Gemini's write_todos (descriptions) count."""
        plan = call(ITEMS)
        plan["tool_calls"][0]["function"]["name"] = "update_plan"
        plan["tool_calls"][0]["function"]["arguments"] = json.dumps(
            {"plan": [{"step": t.content, "status": t.status} for t in ITEMS]}
        )
        gemini = call(ITEMS, "c2")
        gemini["tool_calls"][0]["function"]["name"] = "write_todos"
        gemini["tool_calls"][0]["function"]["arguments"] = json.dumps(
            {"todos": [{"description": "Ship it", "status": "pending"}]}
        )
        assert visible_todos([plan]) == {t.content: t.status for t in ITEMS}
        assert visible_todos([plan, gemini]) == {"Ship it": "pending"}

    def test_a_refused_call_leaves_the_list_before(self):
        """A call with a status the tool refuses ("done") wrote nothing: the earlier list stands."""
        refused = call((), "c2")
        refused["tool_calls"][0]["function"]["arguments"] = json.dumps(
            {"todos": [{"content": "Oops", "status": "done"}]}
        )
        assert visible_todos([call(ITEMS), refused]) == {t.content: t.status for t in ITEMS}

    def test_bad_arguments_are_ignored(self):
        """A malformed call leaves the earlier list in place."""
        broken = call(ITEMS)
        broken["tool_calls"][0]["function"]["arguments"] = "{not json"
        assert visible_todos([call(ITEMS), broken]) == {t.content: t.status for t in ITEMS}
