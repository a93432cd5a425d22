"""The examples' agent loops, run as a user runs them, against the scripted stand-in model.

Each example runs with the stub's URL and a dummy key in the SDK's own environment variables
(offline: the stub listens on 127.0.0.1). The scripted exchange and the usage line run each
example in its own process, as a user runs it; the other cases run it in-process as ``__main__``,
which tests the same code without an interpreter start per case. The script plays a realistic
exchange: a todo list, a host tool call, the list marked completed, a final answer.
"""

from __future__ import annotations

import gc
import io
import json
import os
import re
import runpy
import subprocess
import sys
import warnings
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from cli_runner import run_cli, swapped_environ
from contracts.sdk_shapes import problems
from killing import kill_inside_tool
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from compaction import CompactionPolicy, Session
from compaction.views.unanswered import interrupted_text
from harness.testing import (
    Api,
    RecordedRequest,
    Reply,
    StubModel,
    ToolCall,
    prompt_tokens,
    unanswered_ids,
)
from prompts import (
    PromptBuilder,
    ToolCatalog,
    anthropic_request,
    get_mode,
    openai_request,
    todo_write_spec,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
KEY = "sk-test-0123456789abcdef"
MODEL = "stub-model"
REQUEST = "Summarize notes.txt and tell me what it says."
NOTES = "The deploy is frozen until Friday.\n"

PLAN = [
    {"content": "Read notes.txt", "status": "in_progress"},
    {"content": "Summarize the notes", "status": "pending"},
    {"content": "Answer the user", "status": "pending"},
]
DONE = [{"content": item["content"], "status": "completed"} for item in PLAN]
ANSWER = "The notes say the deploy is frozen until Friday."
BAD_TODO_CALLS: dict[str, list[tuple[str | dict[str, Any], str]]] = {
    "openai": [
        ('{"todos": [', "- arguments are not valid JSON"),
        ({"todos": [{"content": "x", "status": "done"}]}, "- todos[0].status must be one of"),
    ],
    "anthropic": [
        (
            {"todos": [{"content": "x", "status": "pending", "id": 1}]},
            '- todos[0]: unknown field "id"',
        ),
        ({"todos": "everything"}, '- "todos" must be an array'),
    ],
}
"""Each API's rejected todo_write arguments, with a line of the error the model reads back."""


@dataclass(frozen=True)
class Example:
    """One example loop and the SDK environment it is pointed with."""

    name: str
    api: Api
    url_var: str
    key_var: str
    params_type: Any

    @property
    def path(self) -> Path:
        return EXAMPLES / f"{self.name}.py"

    def url(self, stub: StubModel) -> str:
        """The base URL the SDK wants: OpenAI's ends in /v1, Anthropic's is the root."""
        return stub.base_url if self.api == "openai" else stub.root_url


OPENAI = Example(
    "openai_chat_loop",
    "openai",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    CompletionCreateParamsNonStreaming,
)
ANTHROPIC = Example(
    "anthropic_messages_loop",
    "anthropic",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
    MessageCreateParamsNonStreaming,
)
BOTH = pytest.mark.parametrize("example", [OPENAI, ANTHROPIC], ids=lambda e: e.api)


def environment(example: Example, stub: StubModel, **extra: str) -> dict[str, str]:
    """The example's environment: the stub's URL, a dummy key, none of a developer's settings."""
    ambient = ("OPENAI_", "ANTHROPIC_", "MODEL", "WINDOW_TOKENS")  # a developer's real settings
    env = {k: v for k, v in os.environ.items() if not k.startswith(ambient)}
    env.update(
        {
            example.url_var: example.url(stub),
            example.key_var: KEY,
            "MODEL": MODEL,
            "NO_PROXY": "127.0.0.1",
            "PYTHONIOENCODING": "utf-8",
            **extra,
        }
    )
    return env


def run_example(
    example: Example, stub: StubModel, tmp_path: Path, *, process: bool = False, **extra: str
) -> subprocess.CompletedProcess[str]:
    """Run the example over `stub` from `tmp_path` (where notes.txt is).

    With `process`, in a fresh interpreter, as a user runs it; else in this process as
    ``__main__`` (`runpy`), with argv, environment, cwd and output swapped for the call, which
    spares each test a start-up that imports an SDK.
    """
    env = environment(example, stub, **extra)
    argv = [str(example.path), "session.jsonl", REQUEST]
    if process:
        return subprocess.run(
            [sys.executable, *argv],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    out, err = io.StringIO(), io.StringIO()
    saved, here, code = sys.argv, Path.cwd(), 0
    sys.argv = argv
    os.chdir(tmp_path)
    try:
        with swapped_environ(env), redirect_stdout(out), redirect_stderr(err):
            try:
                runpy.run_path(str(example.path), run_name="__main__")
            except SystemExit as exc:  # sys.exit("message"): the message on stderr, status 1
                if isinstance(exc.code, str):
                    print(exc.code, file=sys.stderr)
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        sys.argv = saved
        os.chdir(here)
        # A script leaves its SDK client to the process's exit, which closes its sockets; here
        # they are collected now, their ResourceWarning being that of a script, not a leak.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def log_events(tmp_path: Path) -> list[dict[str, Any]]:
    """Return the log's events as plain JSON, read line by line."""
    lines = (tmp_path / "session.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def tool_results(example: Example, request: RecordedRequest) -> list[tuple[str, bool]]:
    """Return (text, is_error) of every tool result a request sends the model, in order."""
    out = []
    for message in request.json()["messages"]:
        if example.api == "openai" and message["role"] == "tool":
            out.append((message["content"], False))
        if example.api == "anthropic" and isinstance(message["content"], list):
            out += [
                ("".join(part["text"] for part in block["content"]), block.get("is_error", False))
                for block in message["content"]
                if block["type"] == "tool_result"
            ]
    return out


def cache_control_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Return the path of every object carrying ``cache_control`` in a request, in order."""
    if isinstance(value, dict):
        here = [path] if "cache_control" in value else []
        return here + [p for k, v in value.items() for p in cache_control_paths(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in cache_control_paths(v, (*path, i))]
    return []


def expected_first_request(example: Example, tmp_path: Path) -> dict[str, Any]:
    """The request the builder lays out for the new turn, with the example's own catalog."""
    read_file = runpy.run_path(str(example.path))["READ_FILE"]
    builder, mode = PromptBuilder(ToolCatalog([read_file])), get_mode("agent")
    with Session(tmp_path / "expected.jsonl") as session:
        session.start_turn(REQUEST)
        if example.api == "openai":
            return openai_request(builder, mode, session, model=MODEL)
        return anthropic_request(builder, mode, session, model=MODEL)


def exchange() -> list[Reply]:
    """The scripted model: plan, read the notes, mark everything completed, answer."""
    return [
        Reply("I will plan this first.", tool_calls=[ToolCall("todo_write", {"todos": PLAN})]),
        Reply(None, tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
        Reply(None, tool_calls=[ToolCall("todo_write", {"todos": DONE})]),
        Reply(ANSWER),
    ]


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text(NOTES, encoding="utf-8")
    return tmp_path


@dataclass(frozen=True)
class Exchange:
    """One example's run of the scripted exchange: the process, what the stub got, the log."""

    example: Example
    done: subprocess.CompletedProcess[str]
    requests: list[RecordedRequest]
    events: list[dict[str, Any]]
    folder: Path


@pytest.fixture(scope="module", params=[OPENAI, ANTHROPIC], ids=lambda e: e.api)
def exchanged(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Exchange:
    """Run an example once over the scripted exchange (the tests below read the same run)."""
    example: Example = request.param
    folder = tmp_path_factory.mktemp(example.api)
    (folder / "notes.txt").write_text(NOTES, encoding="utf-8")
    with StubModel(exchange()) as stub:
        done = run_example(example, stub, folder, process=True)
    return Exchange(example, done, list(stub.requests), log_events(folder), folder)


class TestScriptedExchange:
    def test_the_loop_runs_to_the_answer(self, exchanged: Exchange) -> None:
        """Exit 0; the answer, then the task panel with every item completed, on stdout."""
        done = exchanged.done
        assert (done.returncode, done.stderr) == (0, "")
        panel = "3 completed, 0 in progress, 0 pending\n" + "".join(
            f"✓ {item['content']}\n" for item in PLAN
        )
        assert done.stdout == f"{ANSWER}\n\n{panel}"
        assert len(exchanged.requests) == 4
        assert KEY not in done.stdout

    def test_the_log_holds_the_lists_the_results_and_the_turn(self, exchanged: Exchange) -> None:
        """Two todo/write events with the lists, the three tool results, one whole turn."""
        events = exchanged.events
        types = [e["type"] for e in events]
        assert types[0] == "turn/start"
        assert types[-1] == "turn/end"
        assert types.count("turn/start") == types.count("turn/end") == 1
        assert [e["data"]["todos"] for e in events if e["type"] == "todo/write"] == [PLAN, DONE]
        messages = [e["data"] for e in events if e["type"] == "message"]
        assert [m["content"] for m in messages if m["role"] == "tool"] == [
            "Todo list updated: 2 pending, 1 in progress, 0 completed.",
            NOTES,
            "Todo list updated: 0 pending, 0 in progress, 3 completed.",
        ]
        assert messages[0] == {"role": "user", "content": REQUEST}
        assert messages[-1]["content"] == ANSWER
        # each todo/write comes right after the assistant message that called it
        for i, event in enumerate(events):
            if event["type"] == "todo/write":
                calls = events[i - 1]["data"]["tool_calls"]
                assert [c["function"]["name"] for c in calls] == ["todo_write"]

    def test_requests_carry_the_prompt_the_tools_and_the_results(self, exchanged: Exchange) -> None:
        """The first request is the builder's; every one keeps its prefix and is SDK-valid."""
        example = exchanged.example
        bodies = [r.json() for r in exchanged.requests]
        expected = expected_first_request(example, exchanged.folder)
        assert {k: v for k, v in bodies[0].items() if k != "max_tokens"} == expected
        spec = todo_write_spec(allow_parallel_in_progress=False)
        todo_tool = spec.openai() if example.api == "openai" else spec.anthropic()
        for request, body in zip(exchanged.requests, bodies, strict=True):
            assert request.path == (
                "/v1/chat/completions" if example.api == "openai" else "/v1/messages"
            )
            assert problems(example.params_type, body) == []
            assert body["tools"] == expected["tools"]
            assert todo_tool in body["tools"]
            assert body["model"] == MODEL
            if example.api == "openai":
                assert body["messages"][0] == expected["messages"][0]
            else:
                assert body["system"] == expected["system"]
        # the model reads back exactly what the tools returned
        assert tool_results(example, exchanged.requests[-1]) == [
            ("Todo list updated: 2 pending, 1 in progress, 0 completed.", False),
            (NOTES, False),
            ("Todo list updated: 0 pending, 0 in progress, 3 completed.", False),
        ]

    @pytest.mark.parametrize("exchanged", [ANTHROPIC], ids=["anthropic"], indirect=True)
    def test_anthropic_requests_carry_the_builders_breakpoints(self, exchanged: Exchange) -> None:
        """Each request marks the stable system block and the last block of the last message."""
        expected = cache_control_paths(expected_first_request(ANTHROPIC, exchanged.folder))
        stable = [path for path in expected if path[0] == "system"]
        assert len(stable) == 1
        for request in exchanged.requests:
            body = request.json()
            last = len(body["messages"]) - 1
            end = ("messages", last, "content", len(body["messages"][last]["content"]) - 1)
            assert sorted(cache_control_paths(body), key=str) == sorted([*stable, end], key=str)
        # the prefix up to the system breakpoint is read back from the cache from call 2 on
        usages = [
            e["data"]["provider_fields"]["usage"]
            for e in exchanged.events
            if e["type"] == "message" and e["data"]["role"] == "assistant"
        ]
        assert usages[0]["cache_read_input_tokens"] == 0
        assert all(u["cache_read_input_tokens"] > 0 for u in usages[1:])


class TestCompaction:
    @BOTH
    def test_a_small_window_compacts_and_carries_the_tasks(
        self, example: Example, tmp_path: Path
    ) -> None:
        """With a 2,000-token window the loop compacts; the Checkpoint carries the open tasks."""
        (tmp_path / "notes.txt").write_text(" ".join(f"note{i}" for i in range(60)))
        read = Reply(None, tool_calls=[ToolCall("read_file", {"path": "notes.txt"})])
        plan = Reply("Plan.", tool_calls=[ToolCall("todo_write", {"todos": PLAN})])
        with StubModel([plan, read, read, read, read, Reply(ANSWER)]) as stub:
            done = run_example(example, stub, tmp_path, WINDOW_TOKENS="2000")
        assert (done.returncode, done.stderr) == (0, "")
        events = log_events(tmp_path)
        checkpoints = [e for e in events if e["type"] == "compaction/checkpoint"]
        assert len(checkpoints) >= 1
        for checkpoint in checkpoints:
            assert checkpoint["data"]["current"] == ["Read notes.txt"]
            assert checkpoint["data"]["pending"] == ["Summarize the notes", "Answer the user"]
            assert checkpoint["data"]["tokens_after"] < checkpoint["data"]["tokens_before"]
        # the request after the first compaction opens its conversation with the Checkpoint
        before = sum(1 for e in events[: events.index(checkpoints[0])] if e["type"] == "message")
        index = sum(
            1
            for e in events[: events.index(checkpoints[0])]
            if e["type"] == "message" and e["data"]["role"] == "assistant"
        )
        body = stub.requests[index].json()
        sent = json.dumps(body["messages"], ensure_ascii=False)
        assert "## Pending Jobs" in sent
        assert '- \\"Summarize the notes\\"' in sent
        assert len(body["messages"]) < before
        assert "3 completed" not in done.stdout  # the model never marked them: still open
        assert "1 in progress, 2 pending" in done.stdout


def reads(count: int) -> list[Reply]:
    """The scripted model: plan, then read notes.txt `count` times, then answer."""
    read = Reply(None, tool_calls=[ToolCall("read_file", {"path": "notes.txt"})])
    plan = Reply("Plan.", tool_calls=[ToolCall("todo_write", {"todos": PLAN})])
    return [plan, *[read] * count, Reply(ANSWER)]


@pytest.fixture
def long_notes(tmp_path: Path) -> Path:
    """A notes.txt of about 600 tokens: each read grows the request by that much."""
    (tmp_path / "notes.txt").write_text(" ".join(f"note{i}" for i in range(300)))
    return tmp_path


class TestContextOverflow:
    """The provider refuses a request as too long (its real 400 body): compact once, retry once."""

    @BOTH
    def test_an_overflow_is_answered_by_one_compaction_and_one_retry(
        self, example: Example, long_notes: Path
    ) -> None:
        """The stub's 5,000-token window is hit once: one Checkpoint, the same call sent again."""
        with StubModel(reads(8), context_window=5_000) as stub:
            done = run_example(example, stub, long_notes)
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.startswith(ANSWER)
        assert len(stub.refused) == 1
        refused = stub.refused[0]
        sizes = [prompt_tokens(example.api, r.json()) for r in stub.requests]
        assert sizes[refused] > 5_000
        assert all(size <= 5_000 for i, size in enumerate(sizes) if i != refused)
        assert len(stub.requests) == len(reads(8)) + 1  # every step answered, one sent twice
        events = log_events(long_notes)
        checkpoints = [e for e in events if e["type"] == "compaction/checkpoint"]
        assert len(checkpoints) == 1
        # the retry carries the Checkpoint and is smaller than the refused request
        retry = json.dumps(stub.requests[refused + 1].json()["messages"], ensure_ascii=False)
        assert "## Pending Jobs" in retry
        assert "## Pending Jobs" not in json.dumps(stub.requests[refused].json()["messages"])
        assert sizes[refused + 1] < sizes[refused]
        # each scripted reply was logged once: the refused call left nothing in the log
        roles = [e["data"]["role"] for e in events if e["type"] == "message"]
        assert roles.count("assistant") == len(reads(8))

    @BOTH
    def test_a_second_overflow_ends_as_one_line_naming_the_size(
        self, example: Example, long_notes: Path
    ) -> None:
        """Refused, compacted, refused again: exit 1, one line with the request's size."""
        script = [*reads(3)[:-1], Reply(overflow=True), Reply(overflow=True), Reply(ANSWER)]
        with StubModel(script) as stub:
            done = run_example(example, stub, long_notes)
        assert done.returncode == 1
        assert done.stdout == ""
        (line,) = done.stderr.splitlines()
        assert line.startswith(
            "error: RequestOverflowError: the provider refused the request as too long after "
            "one compaction and a retry: about "
        )
        window = "128000" if example.api == "openai" else "140000"
        assert f" tokens against a {window}-token window (BadRequestError: " in line
        assert KEY not in line
        assert stub.refused == [4, 5]
        assert len(stub.requests) == 6  # no third try
        events = log_events(long_notes)
        assert [e["type"] for e in events].count("compaction/checkpoint") == 1
        retry = json.dumps(stub.requests[5].json()["messages"], ensure_ascii=False)
        assert "## Pending Jobs" in retry
        size = int(line.split("about ")[1].split(" tokens")[0])
        with Session(long_notes / "session.jsonl") as session:
            assert size > session.context_tokens  # the whole request: fixed part and reserve

    def test_deepseek_words_are_recognised_too(self, long_notes: Path) -> None:
        """DeepSeek's "maximum context length ... you requested" refusal gets the same answer."""
        with StubModel(reads(8), context_window=5_000, dialect="deepseek") as stub:
            done = run_example(OPENAI, stub, long_notes)
        assert (done.returncode, done.stderr) == (0, "")
        assert len(stub.refused) == 1
        refused = stub.requests[stub.refused[0]]
        assert refused.path == "/v1/chat/completions"
        checkpoints = [e for e in log_events(long_notes) if e["type"] == "compaction/checkpoint"]
        assert len(checkpoints) == 1


class TestTokenScale:
    @BOTH
    def test_the_run_logs_usage_and_learns_the_scale(
        self, example: Example, long_notes: Path
    ) -> None:
        """Each answered call leaves a usage/report; after enough of them the scale is known."""
        with StubModel(reads(10)) as stub:
            done = run_example(example, stub, long_notes)
        assert (done.returncode, done.stderr) == (0, "")
        events = log_events(long_notes)
        reports = [e["data"] for e in events if e["type"] == "usage/report"]
        assert len(reports) == len(stub.requests) == 12
        sizes = [prompt_tokens(example.api, r.json()) for r in stub.requests]
        assert [r["prompt_tokens"] for r in reports] == sizes  # what the provider said
        assert {(r["purpose"], r["model"]) for r in reports} == {("turn", "stub")}
        # each report is logged before the reply it came with
        for i, event in enumerate(events):
            if event["type"] == "usage/report":
                assert events[i + 1]["type"] == "message"
                assert events[i + 1]["data"]["role"] == "assistant"
        shown = run_cli("log", "--json", long_notes / "session.jsonl")
        assert shown.returncode == 0, shown.stderr
        scale = json.loads(shown.stdout)["token_scale"]
        assert isinstance(scale, float)
        assert 0.5 < scale < 3.0
        with Session(long_notes / "session.jsonl") as session:
            assert session.token_scale == scale

    def test_a_short_run_has_no_scale_yet(self, notes: Path) -> None:
        """The scripted four-call exchange is too short to learn from: token_scale is null."""
        with StubModel(exchange()) as stub:
            done = run_example(OPENAI, stub, notes)
        assert done.returncode == 0
        assert [e["type"] for e in log_events(notes)].count("usage/report") == 4
        shown = run_cli("log", "--json", notes / "session.jsonl")
        assert json.loads(shown.stdout)["token_scale"] is None


class TestFailures:
    @BOTH
    def test_server_error_ends_as_one_line(self, example: Example, notes: Path) -> None:
        """A 500 on every try: the SDK retries, then the loop exits 1 with one line, no trace."""
        with StubModel([Reply(status=500, headers={"retry-after-ms": "1"})]) as stub:
            done = run_example(example, stub, notes)
        assert done.returncode == 1
        assert done.stdout == ""
        lines = done.stderr.splitlines()
        assert len(lines) == 1, done.stderr
        # the SDK's class and the status, never its prose (anthropic 2.x words it anew)
        assert re.match(r"error: InternalServerError: .*\b500\b", lines[0]), lines[0]
        assert "Traceback" not in done.stderr
        assert KEY not in done.stderr
        assert len(stub.requests) == 3  # the first call and the SDK's two retries, all used
        assert [e["type"] for e in log_events(notes)] == ["turn/start", "message"]

    @BOTH
    def test_an_echoed_key_is_redacted(self, example: Example, notes: Path) -> None:
        """A 401 whose body quotes the key (a proxy echoing headers): one line, key redacted."""
        echo = {"error": {"message": f"invalid api key {KEY}", "type": "auth"}}
        with StubModel([Reply(status=401, body=json.dumps(echo).encode())]) as stub:
            done = run_example(example, stub, notes)
        assert done.returncode == 1
        (line,) = done.stderr.splitlines()
        assert re.match(r"error: AuthenticationError: .*\b401\b", line), line
        assert "[REDACTED]" in line
        assert KEY not in done.stderr + done.stdout
        assert len(stub.requests) == 1  # a 401 is not retried

    @BOTH
    def test_bad_calls_become_tool_errors_the_model_reads(
        self, example: Example, notes: Path
    ) -> None:
        """Rejected todo_write calls and a failing host tool answer the model; the loop goes on."""
        bad = BAD_TODO_CALLS[example.api]
        calls = [ToolCall("todo_write", arguments) for arguments, _ in bad]
        calls.append(ToolCall("read_file", {"path": "gone.txt"}))
        with StubModel([Reply(None, tool_calls=calls), Reply("Fixed.")]) as stub:
            done = run_example(example, stub, notes)
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout == "Fixed.\n\n0 completed, 0 in progress, 0 pending\n"
        results = tool_results(example, stub.requests[1])
        assert len(results) == 3
        for (text, _), (_, error) in zip(results, bad, strict=False):
            assert text.startswith("todo_write: rejected, nothing was changed.")
            assert error in text
        assert results[2][0].startswith("read_file: [Errno 2] No such file or directory")
        # Anthropic's tool_result says is_error; chat-completions has no such flag
        assert [flag for _, flag in results] == [example.api == "anthropic"] * 3
        assert "todo/write" not in [e["type"] for e in log_events(notes)]

    def test_untyped_tool_input_ends_as_one_line(self, notes: Path) -> None:
        """A tool_use input that is a string (no real API sends one): exit 1, one line."""
        script = [Reply(None, tool_calls=[ToolCall("todo_write", '{"todos": [')])]
        with StubModel(script) as stub:
            done = run_example(ANTHROPIC, stub, notes)
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            "error: MessageError: message field content[0].input: tool_use input must be an object"
        ]
        # the call was answered (its usage is logged); the malformed reply is not
        assert [e["type"] for e in log_events(notes)] == ["turn/start", "message", "usage/report"]

    @BOTH
    def test_a_log_that_cannot_be_opened_ends_as_one_line(
        self, example: Example, tmp_path: Path
    ) -> None:
        """LOG naming a directory: exit 1, one line naming the path; the model is never called."""
        (tmp_path / "session.jsonl").mkdir()
        with StubModel([Reply("unused")]) as stub:
            done = run_example(example, stub, tmp_path)
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            "error: LogError: session.jsonl: cannot read the log: Is a directory"
        ]
        assert stub.requests == []

    @BOTH
    def test_missing_arguments_print_the_usage(self, example: Example, tmp_path: Path) -> None:
        """Without LOG and REQUEST the example says how to run it, in one line.

        In this process: `sys.exit(TEXT)` is what the interpreter prints on stderr with status 1
        (the scripted exchange runs each example as a process).
        """
        saved, sys.argv = sys.argv, [str(example.path)]
        out = io.StringIO()
        try:
            with redirect_stdout(out), pytest.raises(SystemExit) as exited:
                runpy.run_path(str(example.path), run_name="__main__")
        finally:
            sys.argv = saved
        assert exited.value.code == f"usage: python examples/{example.name}.py LOG REQUEST"
        assert out.getvalue() == ""


CLAUDE_WINDOW = 200_000
CLAUDE_SCALE_HIGH = 1.46
"""The upper quartile of Claude's provider tokens per o200k token on the shared transcripts."""


class TestExampleFiles:
    def test_the_anthropic_default_window_is_safe_with_the_scale(self) -> None:
        """Its trigger stays under Claude's window before the scale is learned and after."""
        text = ANTHROPIC.path.read_text(encoding="utf-8")
        (default,) = re.findall(r'"WINDOW_TOKENS", "(\d+)"', text)
        policy = CompactionPolicy(int(default))
        before = policy.trigger_tokens * CLAUDE_SCALE_HIGH  # raw counts, Claude's tokens
        after = policy.in_counted_tokens(CLAUDE_SCALE_HIGH).trigger_tokens * CLAUDE_SCALE_HIGH
        assert before + policy.output_reserve < CLAUDE_WINDOW
        assert after + policy.output_reserve < CLAUDE_WINDOW

    def test_each_example_is_under_60_lines(self) -> None:
        """The two loops and the two integration examples exist, each under 60 lines."""
        sizes = {
            p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in EXAMPLES.glob("*.py")
        }
        assert set(sizes) == {
            "openai_chat_loop.py",
            "anthropic_messages_loop.py",
            "langchain_agent.py",
            "agents_sdk_session.py",
        }
        assert all(size < 60 for size in sizes.values()), sizes


class TestKilledInsideAToolCall:
    @BOTH
    def test_a_second_run_answers_the_killed_call_and_is_accepted(
        self, example: Example, tmp_path: Path
    ) -> None:
        """Killed inside read_file; the next run's request holds the placeholder, sent once."""
        first = [Reply(None, tool_calls=[ToolCall("read_file", {"path": "notes.txt"}, id="c1")])]
        with StubModel(first) as stub:
            argv = [sys.executable, str(example.path), "session.jsonl", REQUEST]
            env = environment(example, stub)
            kill_inside_tool(argv, tmp_path / "notes.txt", cwd=tmp_path, env=env)
        (tmp_path / "notes.txt").unlink()
        (tmp_path / "notes.txt").write_text(NOTES, encoding="utf-8")
        with StubModel([Reply(ANSWER)]) as stub:
            done = run_example(example, stub, tmp_path)
        assert (done.returncode, stub.unpaired) == (0, []), done.stderr
        flagged = example.api == "anthropic"  # chat completions has no error flag
        assert tool_results(example, stub.requests[0]) == [(interrupted_text(), flagged)]
        assert problems(example.params_type, stub.requests[0].json()) == []
        texts = [e["data"].get("content") for e in log_events(tmp_path)]
        assert texts.count(interrupted_text()) == 1

    @BOTH
    def test_harness_context_prints_a_request_with_the_call_answered(
        self, example: Example, tmp_path: Path
    ) -> None:
        """`harness context` after the kill: the call answered, recorded once, a valid request."""
        first = [Reply(None, tool_calls=[ToolCall("read_file", {"path": "notes.txt"}, id="c1")])]
        with StubModel(first) as stub:
            argv = [sys.executable, str(example.path), "session.jsonl", REQUEST]
            kill_inside_tool(
                argv, tmp_path / "notes.txt", cwd=tmp_path, env=environment(example, stub)
            )
        log = str(tmp_path / "session.jsonl")
        warned = run_cli("log", log)
        assert "tool call c1 (read_file) at seq" in warned.stdout
        for _ in range(2):
            shown = run_cli("context", log, "--format", example.api, "--max-tokens", "64")
            request = json.loads(shown.stdout)
            api: Api = example.api
            assert unanswered_ids(api, request) == []
            assert problems(example.params_type, {**request, "model": MODEL}) == []
            assert shown.returncode == 0
        texts = [e["data"].get("content") for e in log_events(tmp_path)]
        assert texts.count(interrupted_text()) == 1
        assert "has no result" not in run_cli("log", log).stdout
