from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.peers.drivers._common import (
    COPY_SUMMARY_HEAD,
    STRUCTURAL_SUMMARY,
    Recorder,
    StepQueue,
    extract_todo_lists,
    load_script,
    summarize,
)
from benchmarks.peers.metrics import (
    DriverRecord,
    load_record,
    owes_answer,
    request_lines,
    score,
    serialize,
    to_message,
    todo_truth,
    todos_at_latest_status,
)
from compaction import Message, get_tokenizer
from harness.simulation import dump_exchange, generate, to_exchange
from harness.simulation import serialize as replay_serialize
from prompts.requests import openai_message

TODOS = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Fix `parse()` for 'quoted' input", "status": "in_progress"},
    {"content": "Run the tests", "status": "pending"},
]


def _todo_call(call_id: str, todos: list[dict[str, str]]) -> dict[str, Any]:
    args = json.dumps({"todos": todos})
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "write_todos", "arguments": args},
            }
        ],
    }


def _record(requests: list[list[dict[str, Any]]], **fields: Any) -> DriverRecord:
    recorder = Recorder()
    for messages in requests:
        recorder.record(messages, [{"type": "function", "function": {"name": "t"}}])
    data = {
        "peer": "p",
        "variant": "v",
        "summarizer": "structural",
        "budget": 100,
        "wall_time_s": 0.5,
        "versions": {"python": "3.11"},
        "summary_calls": 0,
        "messages": recorder.messages,
        "tools": recorder.tools,
        "requests": recorder.requests,
    }
    return DriverRecord.model_validate({**data, **fields})


class TestExtractTodoLists:
    def test_json_arguments(self):
        """A JSON todo payload is read back exactly."""
        assert extract_todo_lists(json.dumps({"todos": TODOS})) == [TODOS]

    def test_html_escaped_xml_transcript(self):
        """LangChain's XML transcript escapes quotes; the payload still parses."""
        text = f'<tool_call id="c1" name="write_todos">{html.escape(json.dumps({"todos": TODOS}))}'
        assert extract_todo_lists(text + "</tool_call>") == [TODOS]

    def test_python_repr(self):
        """A Python-repr payload with a todos key parses too."""
        assert extract_todo_lists(repr({"todos": TODOS})) == [TODOS]

    def test_openhands_task_list(self):
        """OpenHands' task_list reads as todos: title is the content, todo/done are mapped."""
        tasks = [
            {"title": "Read the parser", "notes": "", "status": "done"},
            {"title": "Run the tests", "notes": "", "status": "todo"},
            {"title": "Fix it", "notes": "", "status": "in_progress"},
        ]
        text = json.dumps({"command": "plan", "task_list": tasks})
        assert extract_todo_lists(text) == [
            [
                {"content": "Read the parser", "status": "completed"},
                {"content": "Run the tests", "status": "pending"},
                {"content": "Fix it", "status": "in_progress"},
            ]
        ]

    def test_a_refused_list_is_no_list(self):
        """A todo call with a status its tool refuses ("done") wrote no list: it is not read."""
        refused = json.dumps({"todos": [{"content": "Oops", "status": "done"}]})
        assert extract_todo_lists(json.dumps({"todos": TODOS}) + refused) == [TODOS]

    def test_in_order_of_appearance(self):
        """Several payloads come back in the order they appear."""
        first, second = TODOS[:1], TODOS[1:]
        text = f"a {json.dumps({'todos': first})} b {json.dumps({'todos': second})}"
        assert extract_todo_lists(text) == [first, second]

    @pytest.mark.parametrize(
        "text",
        [
            "no todos here",
            '"todos": [unclosed',
            '"todos": ["just a string"]',
            "Updated todo list to [{'content': 'x', 'status': 'pending'}]",
        ],
    )
    def test_non_payloads_are_ignored(self, text):
        """Text without a well-formed todos payload yields nothing."""
        assert extract_todo_lists(text) == []


class TestSummarize:
    def test_structural_ignores_content(self):
        """The structural summarizer returns the same text whatever it is given."""
        assert summarize("structural", json.dumps({"todos": TODOS})) == STRUCTURAL_SUMMARY

    def test_copy_takes_latest_list(self):
        """The copying summarizer copies the last todo payload, verbatim."""
        text = json.dumps({"todos": TODOS[:1]}) + json.dumps({"todos": TODOS})
        out = summarize("copy-todos", text)
        assert out.startswith(COPY_SUMMARY_HEAD)
        assert extract_todo_lists(out) == [TODOS]

    def test_copy_without_list_falls_back(self):
        """With no todo payload in sight, the copying summarizer has nothing to copy."""
        assert summarize("copy-todos", "nothing") == STRUCTURAL_SUMMARY

    def test_unknown_summarizer(self):
        """An unknown summarizer name is a programming error."""
        with pytest.raises(ValueError, match="unknown summarizer 'llm'"):
            summarize("llm", "")


class TestLoadScript:
    def test_replays_every_assistant_message(self, tmp_path: Path):
        """Each assistant message becomes one step; each tool output is found by call id."""
        payloads = generate(4, 1)
        path = dump_exchange(payloads, tmp_path / "s.json", name="s4")
        exchange = to_exchange(payloads)
        script = load_script(path)
        assert script.name == "s4"
        assert [t.user for t in script.turns] == [
            next(m["content"] for m in t["messages"] if m["role"] == "user")
            for t in exchange["turns"]
        ]
        assistants = [
            m for t in exchange["turns"] for m in t["messages"] if m["role"] == "assistant"
        ]
        assert sum(len(t.steps) for t in script.turns) == len(assistants)
        tool_msgs = [m for t in exchange["turns"] for m in t["messages"] if m["role"] == "tool"]
        assert script.results() == {m["tool_call_id"]: m["content"] for m in tool_msgs}
        assert "todo_write" not in {t["name"] for t in script.tools}

    def test_queue_runs_out_with_none(self, tmp_path: Path):
        """Past the end of a turn's script the queue answers None and counts the overrun."""
        script = load_script(dump_exchange(generate(1, 0), tmp_path / "s.json"))
        queue = StepQueue(script)
        queue.start_turn(0)
        steps = [queue.pop() for _ in script.turns[0].steps]
        assert all(step is not None for step in steps)
        assert queue.pop() is None
        assert queue.overruns == 1

    def test_remaining_counts_the_steps_a_turn_still_owes(self, tmp_path: Path):
        """A turn going on past a reply without tool calls still has steps: the driver reruns."""
        script = load_script(dump_exchange(generate(1, 0), tmp_path / "s.json"))
        queue = StepQueue(script)
        queue.start_turn(0)
        total = len(script.turns[0].steps)
        assert queue.remaining() == total > 1
        queue.pop()
        assert queue.remaining() == total - 1
        while queue.pop() is not None:
            pass
        assert queue.remaining() == 0

    def test_recorded_system_message_is_the_system_prompt(self, tmp_path: Path):
        """A real transcript's system message (SWE-agent's) reaches the peers as their prompt."""
        doc = to_exchange(generate(1, 0))
        doc["turns"][0]["messages"].insert(0, {"role": "system", "content": "SETTING: be terse"})
        path = tmp_path / "s.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        script = load_script(path)
        assert script.system == "SETTING: be terse"
        assert script.turns[0].user == doc["turns"][0]["messages"][1]["content"]


class TestRecorder:
    def test_messages_stored_once(self):
        """A message repeated across requests is stored once and referenced by key."""
        recorder = Recorder()
        first = [{"role": "user", "content": "hi"}]
        recorder.record(first, [])
        recorder.record([*first, {"role": "assistant", "content": "yo"}], [], overrun=True)
        assert len(recorder.messages) == 2
        assert recorder.requests[1]["messages"][0] == recorder.requests[0]["messages"][0]
        assert recorder.requests[1]["overrun"] is True
        assert "overrun" not in recorder.requests[0]


class TestToMessage:
    def test_langchain_assistant_with_tool_calls(self):
        """An empty-content assistant call becomes a tool-call-only message."""
        message = to_message(_todo_call("c1", TODOS))
        assert message.content is None
        assert message.tool_calls is not None
        assert message.tool_calls[0].function.name == "write_todos"

    def test_text_blocks_are_joined(self):
        """A system message given as text blocks becomes one string."""
        raw = {
            "role": "system",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        }
        assert to_message(raw).content == "ab"

    def test_unknown_fields_are_dropped(self):
        """Fields outside the OpenAI chat message (ids, metadata) are dropped."""
        assert to_message({"role": "user", "content": "x", "id": "1"}) == Message(
            role="user", content="x"
        )


class TestSerialize:
    def test_appending_keeps_the_prefix(self):
        """Appending a message leaves the serialized request before it byte-identical."""
        a = [Message(role="user", content="one")]
        b = [*a, Message(role="assistant", content="two")]
        tools = [{"type": "function", "function": {"name": "t"}}]
        assert serialize(b, tools).startswith(serialize(a, tools))

    def test_same_bytes_as_the_replayer(self):
        """Peers and strategies share one serialization: the replayer's lines, joined."""
        messages = [
            Message(role="system", content="sys"),
            Message(role="tool", tool_call_id="c1", content="out", name="read_file"),
        ]
        tools = [{"type": "function", "function": {"name": "t"}}]
        request = {"tools": tools, "messages": [openai_message(m) for m in messages]}
        assert request_lines(messages, tools) == replay_serialize(request)
        assert serialize(messages, tools) == "".join(replay_serialize(request))


UNFINISHED = [t for t in TODOS if t["status"] != "completed"]
EXCHANGE = {"first_request": "Do the thing", "unfinished": [TODOS[2]]}


class TestTodosAtLatestStatus:
    def test_latest_list_counts(self):
        """Items at their latest status in the last visible list are counted as kept."""
        messages = [to_message(_todo_call("c1", TODOS))]
        assert todos_at_latest_status(messages, UNFINISHED) == (2, 2)

    def test_stale_list_does_not_count(self):
        """An older list with other statuses mentions the items but does not keep them."""
        stale = [{**t, "status": "pending"} for t in TODOS]
        messages = [to_message(_todo_call("c1", stale))]
        assert todos_at_latest_status(messages, UNFINISHED) == (1, 2)

    def test_nothing_visible(self):
        """With no list and no mention, nothing is kept."""
        messages = [Message(role="user", content="hello")]
        assert todos_at_latest_status(messages, UNFINISHED) == (0, 0)


class TestTodoTruth:
    def test_one_entry_per_assistant_message(self):
        """Each model call sees the unfinished items of the last list written before it.

        The session is cut off on a tool result, so it owes an answer: one more entry, the final
        call's, which our replay scores too.
        """
        payloads = generate(3, 0)
        exchange = to_exchange(payloads)
        truths = todo_truth(exchange)
        assistants = [
            m for t in exchange["turns"] for m in t["messages"] if m["role"] == "assistant"
        ]
        assert owes_answer(exchange)
        assert len(truths) == len(assistants) + 1
        assert truths[-1] == truths[-2] or truths[-1] != []
        assert truths[0] == []
        assert truths[1]
        assert all(t["status"] != "completed" for t in truths[1])
        last_write = exchange["turns"][-1]["todo_writes"][-1]["todos"]
        assert exchange["unfinished"] == [t for t in last_write if t["status"] != "completed"]


class TestScore:
    def test_a_session_ending_on_an_answer_owes_none(self):
        """A session whose last message is the assistant's has no final call to score."""
        exchange = to_exchange(generate(3, 0))
        exchange["turns"][-1]["messages"].append({"role": "assistant", "content": "Done."})
        assert not owes_answer(exchange)
        assistants = sum(m["role"] == "assistant" for t in exchange["turns"] for m in t["messages"])
        assert len(todo_truth(exchange)) == assistants

    def test_growing_history(self):
        """A history that only grows reuses each earlier request and rewrites nothing."""
        user = {"role": "user", "content": "Do the thing"}
        step = _todo_call("c1", TODOS)
        result = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
        record = _record([[user], [user, step, result]])
        metrics = score(record, EXCHANGE, get_tokenizer())
        assert metrics.requests == 2
        assert metrics.rewrites == 0
        assert metrics.reused_prefix_tokens[0] == 0
        assert metrics.reused_prefix_tokens[1] >= metrics.prompt_tokens[0] - 2
        assert metrics.summed_input_tokens == sum(metrics.prompt_tokens)
        assert metrics.final_input_tokens == metrics.prompt_tokens[-1]
        assert metrics.first_request_kept
        assert metrics.unfinished_at_latest_status == 1
        assert metrics.todo_checks == 0

    def test_summary_rewrite_and_overrun(self):
        """A summary replacing the history is a rewrite; an overrun call is only the end state."""
        user = {"role": "user", "content": "Do the thing"}
        big = {"role": "tool", "tool_call_id": "c1", "content": "x " * 300}
        summary = {"role": "user", "content": "Summary."}
        record = _record([[user, _todo_call("c1", TODOS), big], [summary], [summary, summary]])
        record.requests[2]["overrun"] = True
        metrics = score(record, EXCHANGE, get_tokenizer())
        assert metrics.requests == 2
        assert metrics.rewrites == 1
        assert not metrics.first_request_kept
        assert metrics.unfinished_at_latest_status == 0
        assert metrics.unfinished_total == 1

    def test_round_trip_through_file(self, tmp_path: Path):
        """A record written as JSON reads back equal."""
        record = _record([[{"role": "user", "content": "hi"}]], overruns=1)
        path = tmp_path / "r.json"
        path.write_text(record.model_dump_json(), encoding="utf-8")
        assert load_record(path) == record
