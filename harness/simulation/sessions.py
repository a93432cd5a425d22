"""Seeded synthetic coding-agent sessions: the common input of every benchmark and peer.

A session is a list of event payloads (`compaction.EventData`) in log order, a pure function of
`(turns, seed)`: user requests; assistant text; tool calls with large outputs (file reads, test
logs, grep hits, diffs); `todo_write` rewrites that move items pending -> in_progress ->
completed, each recorded as the assistant's call, a `todo/write` event and the tool's one-line
result; a Plan-mode phase (a `turn/start` with ``mode="plan"`` in which the agent only reads and
then presents a plan, followed by an agent turn that carries the plan out); one request
interrupted by the user; and a last turn cut off mid-work, so that todos are unfinished at the
end. Sizes follow a real Claude Code session (file reads of 2-12 kB, test logs of 1-8 kB).

`write_session` appends the payloads to a `compaction.Session` log; `dump_exchange` writes the
same session as plain OpenAI-format messages plus todo writes, for peers that run outside this
package (the format is documented in ``benchmarks/README.md``); `load_exchange` reads it back.

Invariants: the same `(turns, seed)` gives the same payloads, byte for byte; every `todo_write`
call in a session passes `compaction.parse_todo_write`; every tool call is answered by exactly one
tool message right after its assistant message; no `todo_write` call is made in Plan mode; the
latest todo list at the end of a session holds at least one unfinished item.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from compaction import (
    EventData,
    FunctionCall,
    Message,
    Session,
    TodoItem,
    TodoWriteData,
    Tokenizer,
    ToolCall,
    TurnEndData,
    TurnStartData,
    parse_todo_write,
    summary_line,
)

EXCHANGE_FORMAT = "context-harness/session-exchange"
EXCHANGE_VERSION = 1

Kind = Literal["read", "search", "edit", "test", "docs", "run"]

_NOUNS = (
    "config",
    "parser",
    "cache",
    "session",
    "router",
    "retry",
    "metrics",
    "auth",
    "export",
    "schema",
    "report",
    "queue",
    "upload",
    "webhook",
    "billing",
    "scheduler",
    "migration",
    "search",
    "invoice",
    "profile",
)
_PACKAGES = ("app", "core", "api", "services", "storage", "cli", "utils")
_VERBS = ("load", "parse", "render", "validate", "flush", "fetch", "merge", "resolve", "encode")
_ERRORS = (
    "KeyError: 'timeout'",
    "AssertionError: assert 3 == 2",
    "TypeError: 'NoneType' object is not subscriptable",
    "ValueError: invalid literal for int() with base 10: ''",
    "AttributeError: 'Settings' object has no attribute 'retries'",
    "sqlite3.OperationalError: no such column: created_at",
)

_TEMPLATES: tuple[tuple[str, tuple[tuple[Kind, str], ...]], ...] = (
    (
        "Add a `--{flag}` option to the `{cmd}` command so that {noun} output can be {adj}. "
        "Keep the default behaviour unchanged and add tests.",
        (
            ("read", "Read how the `{cmd}` command parses its options"),
            ("edit", "Add the `--{flag}` option to the `{cmd}` parser"),
            ("edit", "Pass the {flag} setting through to the {noun} renderer"),
            ("edit", "Write tests for `--{flag}`"),
            ("test", "Run the test suite and fix failures"),
            ("docs", "Document `--{flag}` in the README"),
        ),
    ),
    (
        "The {noun} tests started failing after yesterday's merge with `{error}`. "
        "Find the cause and fix it without skipping any test.",
        (
            ("test", "Reproduce the {noun} test failure"),
            ("search", "Find where `{func}` changed in the merge"),
            ("read", "Read `{path}` around the failing call"),
            ("edit", "Fix the {noun} handling in `{path}`"),
            ("test", "Run the {noun} tests again"),
        ),
    ),
    (
        "Refactor `{path}` so that all {noun} handling lives in one module. "
        "Behaviour must stay identical; the public functions keep their names.",
        (
            ("search", "List every caller of the {noun} helpers"),
            ("read", "Read `{path}` and its tests"),
            ("edit", "Move the {noun} helpers into `{newpath}`"),
            ("edit", "Update the imports of every caller"),
            ("test", "Run the full test suite"),
            ("run", "Run the linter and type checker"),
        ),
    ),
    (
        "Add retry with exponential backoff to the {noun} client: at most {n} attempts, "
        "only on timeouts and 5xx responses, and log each retry.",
        (
            ("read", "Read the {noun} client in `{path}`"),
            ("edit", "Add a backoff helper with jitter"),
            ("edit", "Retry timeouts and 5xx responses in `{func}`"),
            ("edit", "Log each retry with its attempt number"),
            ("edit", "Write tests with a fake clock"),
            ("test", "Run the {noun} client tests"),
        ),
    ),
    (
        "Write a migration that renames the `{old}` column of the {noun} table to `{new}`, "
        "and update every query that uses it.",
        (
            ("search", "Find every query that uses `{old}`"),
            ("edit", "Write the migration renaming `{old}` to `{new}`"),
            ("edit", "Update the {noun} queries"),
            ("test", "Run the migration tests"),
            ("docs", "Note the rename in the changelog"),
        ),
    ),
)

_PLAN_REQUEST = (
    "Before we change anything: plan how to add a {noun} export to CSV and JSON, streaming, "
    "with the same filters as the {noun} list endpoint. Read what you need, but do not edit "
    "files yet. Show me the plan first."
)
_PLAN_STEPS: tuple[tuple[Kind, str], ...] = (
    ("read", "Read the {noun} list endpoint and its filters"),
    ("edit", "Add a streaming {noun} exporter for CSV and JSON"),
    ("edit", "Expose `GET /{noun}/export` with the list filters"),
    ("edit", "Write tests for both formats and an empty result"),
    ("test", "Run the API test suite"),
    ("docs", "Document the export endpoint"),
)
_APPROVE = "The plan looks good. Go ahead, and keep the export memory-bounded."
_INTERRUPT = "Stop that for now, something more urgent came up; we'll come back to it. {request}"
_NARRATION = (
    "Let me look at {what} first.",
    "I'll check {what} before changing anything.",
    "Next, {what}.",
    "Now {what}.",
    "That explains it. Moving on to {what}.",
)


@dataclass(frozen=True)
class SessionSpec:
    """What to generate: a number of turns and a seed; everything else follows from them."""

    turns: int = 12
    """User requests in the session (at least 1)."""
    seed: int = 0
    """Seed of the random choices: same seed, same session."""

    def plan_turn(self) -> int | None:
        """Return the index of the Plan-mode turn (a third of the way in), if there is room."""
        return self.turns // 3 if self.turns >= 3 else None

    def interrupted_turn(self) -> int | None:
        """Return the index of the turn the user interrupts, if there is room."""
        return (2 * self.turns) // 3 if self.turns >= 6 else None


@dataclass
class _Builder:
    """Mutable state of one generation run."""

    spec: SessionSpec
    rng: random.Random
    out: list[EventData] = field(default_factory=list)
    turn: int = 0
    calls: int = 0
    edits: dict[str, int] = field(default_factory=dict)

    # --- primitives --------------------------------------------------------------------------

    def call_id(self) -> str:
        self.calls += 1
        return f"call_{self.turn:03d}_{self.calls:03d}"

    def say(self, text: str) -> None:
        self.out.append(Message(role="assistant", content=text))

    def tools(self, calls: Sequence[tuple[str, dict[str, Any], str]], text: str | None) -> None:
        """One assistant message with one or more tool calls, then one result per call."""
        made = [
            ToolCall(id=self.call_id(), function=FunctionCall(name=n, arguments=_args(a)))
            for n, a, _ in calls
        ]
        self.out.append(Message(role="assistant", content=text, tool_calls=tuple(made)))
        for call, (_, _, result) in zip(made, calls, strict=True):
            self.out.append(Message(role="tool", tool_call_id=call.id, content=result))

    def write_todos(self, todos: Sequence[TodoItem], text: str | None = None) -> None:
        """The model's todo_write call, the `todo/write` event, then the one-line result."""
        args = {"todos": [t.model_dump() for t in todos]}
        items = parse_todo_write(args)
        call = ToolCall(
            id=self.call_id(), function=FunctionCall(name="todo_write", arguments=_args(args))
        )
        self.out.append(Message(role="assistant", content=text, tool_calls=(call,)))
        self.out.append(TodoWriteData(todos=items))
        self.out.append(Message(role="tool", tool_call_id=call.id, content=summary_line(items)))

    # --- content -----------------------------------------------------------------------------

    def path(self) -> str:
        pkg = self.rng.choice(_PACKAGES)
        return f"src/{pkg}/{self.rng.choice(_NOUNS)}.py"

    def words(self) -> dict[str, str]:
        r = self.rng
        noun = r.choice(_NOUNS)
        return {
            "noun": noun,
            "flag": r.choice(("verbose", "dry-run", "json", "since", "limit", "color")),
            "cmd": r.choice(("export", "sync", "report", "import", "serve")),
            "adj": r.choice(("filtered", "paged", "machine-readable", "quieter")),
            "error": r.choice(_ERRORS),
            "func": f"{r.choice(_VERBS)}_{noun}",
            "path": f"src/{r.choice(_PACKAGES)}/{noun}.py",
            "newpath": f"src/{r.choice(_PACKAGES)}/{noun}_ops.py",
            "n": str(r.randint(3, 6)),
            "old": r.choice(("created", "owner", "ts", "kind")),
            "new": r.choice(("created_at", "owner_id", "timestamp", "category")),
        }

    def read_result(self, path: str) -> str:
        version = self.edits.get(path, 0)
        return _source_file(self.spec.seed, path, version, self.rng.randint(40, 260))

    def test_log(self, failing: bool) -> str:
        return _test_log(self.rng, failing)

    def grep_result(self, pattern: str) -> str:
        r = self.rng
        lines = []
        for _ in range(r.randint(6, 40)):
            lines.append(f"{self.path()}:{r.randint(1, 400)}:    {_code_line(r, pattern)}")
        return "\n".join(lines)

    # --- actions -----------------------------------------------------------------------------

    def act(self, kind: Kind, item: str, words: dict[str, str], *, readonly: bool = False) -> None:
        """Do the work of one todo item (or one planning step): 1 to 3 model calls."""
        r = self.rng
        what = item[0].lower() + item[1:]
        text = r.choice(_NARRATION).format(what=what) if r.random() < 0.6 else None
        if kind == "read" or (readonly and kind != "search"):
            paths = [words["path"], self.path()][: r.randint(1, 2)]
            calls = [("read_file", {"path": p}, self.read_result(p)) for p in paths]
            self.tools(calls, text)
        elif kind == "search":
            pat = words["func"] if r.random() < 0.5 else words["noun"]
            self.tools([("grep", {"pattern": pat}, self.grep_result(pat))], text)
            if r.random() < 0.5:
                p = words["path"]
                self.tools([("read_file", {"path": p}, self.read_result(p))], None)
        elif kind in ("edit", "docs"):
            p = "README.md" if kind == "docs" else words["path"]
            if r.random() < 0.5:
                self.tools([("read_file", {"path": p}, self.read_result(p))], text)
                text = None
            for _ in range(r.randint(1, 2)):
                self.tools([("edit_file", self.edit_args(r, p, words), f"Edited {p}.")], text)
                self.edits[p] = self.edits.get(p, 0) + 1
                text = None
        elif kind == "test":
            cmd = f"pytest -q tests/test_{words['noun']}.py"
            self.tools([("run_command", {"command": cmd}, self.test_log(failing=True))], text)
            fix = self.edit_args(r, words["path"], words)
            self.tools([("edit_file", fix, f"Edited {words['path']}.")], None)
            self.tools([("run_command", {"command": cmd}, self.test_log(failing=False))], None)
        else:
            cmd = r.choice(("ruff check .", "mypy src", "git status --short"))
            out = "\n".join(_code_line(r, "ok") for _ in range(r.randint(3, 15)))
            self.tools([("run_command", {"command": cmd}, f"exit 0\n{out}")], text)

    def edit_args(self, r: random.Random, path: str, words: dict[str, str]) -> dict[str, str]:
        old = _code_line(r, words["func"])
        new = old + "\n" + _code_line(r, words["noun"])
        return {"path": path, "old_text": old, "new_text": new}


def _args(obj: dict[str, Any]) -> str:
    """Serialize tool-call arguments the way models emit them: compact, key order kept."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _code_line(r: random.Random, word: str) -> str:
    noun = r.choice(_NOUNS)
    forms = (
        f"result = {word}({noun}, timeout=settings.{noun}_timeout)",
        f"if not {noun}.is_valid():",
        f"raise {noun.capitalize()}Error(f'cannot {r.choice(_VERBS)} {{{noun}.id}}')",
        f"return [{word}(item) for item in {noun}_items if item.enabled]",
        f"logger.debug('{word}: %s', {noun}.name)",
        f"from app.{noun} import {word}",
    )
    return r.choice(forms)


@cache
def _source_file(seed: int, path: str, version: int, lines: int) -> str:
    """A plausible Python module, numbered like a file-read tool shows it."""
    r = random.Random(f"{seed}:{path}:{version}:{lines}")
    noun = Path(path).stem
    body = [f'"""The {noun} module: {r.choice(_VERBS)} and {r.choice(_VERBS)} {noun} records."""']
    body += ["", "from __future__ import annotations", "", "import logging", ""]
    while len(body) < lines:
        verb = r.choice(_VERBS)
        name = f"{verb}_{r.choice(_NOUNS)}"
        body += [
            "",
            "",
            f"def {name}({noun}: {noun.capitalize()}, *, strict: bool = False) -> dict:",
        ]
        body.append(f'    """{verb.capitalize()} a {noun} and return its fields."""')
        for _ in range(r.randint(4, 14)):
            body.append("    " + _code_line(r, name))
        body.append(f"    return {{'id': {noun}.id, 'status': {noun}.status}}")
    return "\n".join(f"{i:6d}\t{line}" for i, line in enumerate(body[:lines], 1))


def _test_log(r: random.Random, failing: bool) -> str:
    noun = r.choice(_NOUNS)
    n = r.randint(30, 180)
    out = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0",
        f"collected {n} items",
        "",
    ]
    dots = "".join("F" if failing and r.random() < 0.04 else "." for _ in range(n))
    if failing and "F" not in dots:
        dots = "F" + dots[1:]
    for i in range(0, n, 60):
        out.append(f"tests/test_{noun}.py {dots[i : i + 60]}")
    fails = dots.count("F")
    if failing:
        out += [
            "",
            "=================================== FAILURES ===================================",
        ]
        for k in range(fails):
            out.append(
                f"_____________________ test_{r.choice(_VERBS)}_{noun}_{k} _____________________"
            )
            for _ in range(r.randint(8, 25)):
                out.append("    " + _code_line(r, f"{r.choice(_VERBS)}_{noun}"))
            out.append(f"E   {r.choice(_ERRORS)}")
        out.append(f"{'=' * 25} {fails} failed, {n - fails} passed in 3.21s {'=' * 26}")
    else:
        out.append(
            f"============================== {n} passed in 2.87s ==============================="
        )
    return "\n".join(out)


def _progress(items: Sequence[str], done: int, *, current: bool = True) -> tuple[TodoItem, ...]:
    """A list where the first `done` items are completed and the next one is in progress."""
    out = []
    for i, text in enumerate(items):
        if i < done:
            status: Literal["pending", "in_progress", "completed"] = "completed"
        elif i == done and current:
            status = "in_progress"
        else:
            status = "pending"
        out.append(TodoItem(content=text, status=status))
    return tuple(out)


def _agent_turn(
    b: _Builder,
    request: str,
    steps: Sequence[tuple[Kind, str]],
    words: dict[str, str],
    *,
    stop_after: int | None = None,
    mode: str = "agent",
    intro: str | None = None,
) -> None:
    items = [s.format(**words) for _, s in steps]
    b.out += [TurnStartData(mode=mode), Message(role="user", content=request)]
    b.write_todos(
        _progress(items, 0), intro or "I'll track this as a list and start on the first item."
    )
    for i, (kind, _) in enumerate(steps):
        b.act(kind, items[i], words)
        if stop_after is not None and i + 1 >= stop_after:
            b.write_todos(_progress(items, i + 1))
            return
        if i + 1 < len(items):
            b.write_todos(_progress(items, i + 1))
    b.write_todos(_progress(items, len(items)))
    b.say(
        f"Done: {len(items)} steps completed. "
        + b.rng.choice(
            ("All tests pass.", "The suite is green and the docs are updated.", "Ready for review.")
        )
    )
    b.out.append(TurnEndData())


def _plan_turns(b: _Builder) -> None:
    words = b.words()
    request = _PLAN_REQUEST.format(**words)
    b.out += [TurnStartData(mode="plan"), Message(role="user", content=request)]
    looks: tuple[tuple[Kind, str], ...] = (
        ("read", "the list endpoint"),
        ("search", "the filters"),
        ("read", "the serializers"),
    )
    for kind, step in looks:
        b.act(kind, step, words, readonly=True)
    items = [s.format(**words) for _, s in _PLAN_STEPS]
    plan = "\n".join(f"{i}. {text}" for i, text in enumerate(items, 1))
    b.say(f"Here is the plan. I have not changed any file.\n\n{plan}\n\nShall I go ahead?")
    b.out.append(TurnEndData())
    b.turn += 1
    _agent_turn(b, _APPROVE, _PLAN_STEPS, words, intro="Starting on the approved plan.")


def generate(turns: int = 12, seed: int = 0) -> list[EventData]:
    """Return the payloads of a synthetic session, in log order (a pure function of its args).

    Args:
        turns: user requests in the session (at least 1); the Plan phase counts as two.
        seed: seed of every random choice.

    Raises:
        ValueError: `turns` is below 1.
    """
    if turns < 1:
        raise ValueError(f"turns must be at least 1, not {turns}")
    spec = SessionSpec(turns=turns, seed=seed)
    b = _Builder(spec=spec, rng=random.Random(seed))
    plan_at, cut_at = spec.plan_turn(), spec.interrupted_turn()
    while b.turn < turns:
        b.calls = 0
        last = b.turn == turns - 1
        if b.turn == plan_at and b.turn + 1 < turns - 1:
            _plan_turns(b)
        else:
            template, steps = b.rng.choice(_TEMPLATES)
            words = b.words()
            request = template.format(**words)
            if b.turn == cut_at:
                request = _INTERRUPT.format(request=request)
            stop = len(steps) // 2 if last else None
            if cut_at is not None and b.turn + 1 == cut_at:
                stop = 2
            _agent_turn(b, request, steps, words, stop_after=stop)
            if stop is not None and not last:
                b.out.append(TurnEndData(reason="interrupted"))
        b.turn += 1
    return b.out


def write_session(
    path: Path | str, turns: int = 12, seed: int = 0, *, tokenizer: Tokenizer | None = None
) -> Session:
    """Generate a session and append it to a new log at `path`; return the open `Session`.

    Raises:
        FileExistsError: `path` exists already (a generated session never extends a log).
    """
    target = Path(path)
    if target.exists():
        raise FileExistsError(f"{target} exists; choose a new path for the generated session")
    session = Session(target, tokenizer=tokenizer, sync="batch")
    with session.batch():
        session.append_many(generate(turns, seed))
    return session


@cache
def user_tools() -> tuple[dict[str, Any], ...]:
    """Return the OpenAI function definitions of the session's tools (besides `todo_write`)."""
    text = resources.files("harness.simulation").joinpath("data", "tools.json").read_text("utf-8")
    tools: list[dict[str, Any]] = json.loads(text)
    return tuple(tools)


def final_todos(payloads: Sequence[EventData]) -> tuple[TodoItem, ...]:
    """Return the latest todo list of a session (empty when it never wrote one)."""
    for p in reversed(payloads):
        if isinstance(p, TodoWriteData):
            return p.todos
    return ()


def unfinished(payloads: Sequence[EventData]) -> tuple[TodoItem, ...]:
    """Return the items of the latest todo list that are not completed."""
    return tuple(t for t in final_todos(payloads) if t.status != "completed")


def to_exchange(payloads: Sequence[EventData], **meta: object) -> dict[str, Any]:
    """Return a session in the exchange format (see ``benchmarks/README.md``).

    Args:
        payloads: the session's events, in log order.
        **meta: extra fields stored under ``meta`` (e.g. ``seed``, ``turns``).
    """
    turns: list[dict[str, Any]] = []
    for p in payloads:
        if isinstance(p, TurnStartData):
            turns.append(
                {"mode": p.mode or "agent", "messages": [], "todo_writes": [], "ended": False}
            )
            continue
        if not turns:
            turns.append({"mode": "agent", "messages": [], "todo_writes": [], "ended": False})
        turn = turns[-1]
        if isinstance(p, Message):
            turn["messages"].append(p.model_dump(mode="json", exclude_none=True))
        elif isinstance(p, TodoWriteData):
            call_id = _last_call_id(turn["messages"])
            turn["todo_writes"].append(
                {
                    "after_message": len(turn["messages"]) - 1,
                    "tool_call_id": call_id,
                    "todos": [t.model_dump() for t in p.todos],
                }
            )
        elif isinstance(p, TurnEndData):
            turn["ended"] = True
            if p.reason:
                turn["end_reason"] = p.reason
    first_user = next((m for m in payloads if isinstance(m, Message) and m.role == "user"), None)
    return {
        "format": EXCHANGE_FORMAT,
        "version": EXCHANGE_VERSION,
        "meta": dict(sorted(meta.items())),
        "tools": list(user_tools()),
        "turns": turns,
        "first_request": first_user.text() if first_user else None,
        "final_todos": [t.model_dump() for t in final_todos(payloads)],
        "unfinished": [t.model_dump() for t in unfinished(payloads)],
    }


def _last_call_id(messages: list[dict[str, Any]]) -> str | None:
    for m in reversed(messages):
        for call in m.get("tool_calls") or ():
            if call["function"]["name"] == "todo_write":
                return str(call["id"])
    return None


def dump_exchange(payloads: Sequence[EventData], path: Path | str, **meta: object) -> Path:
    """Write a session as exchange-format JSON (UTF-8, sorted keys, 1-space indent)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(to_exchange(payloads, **meta), ensure_ascii=False, indent=1, sort_keys=True)
    target.write_text(text + "\n", encoding="utf-8")
    return target


def load_exchange(path: Path | str) -> list[EventData]:
    """Read an exchange-format file back into event payloads, in log order.

    Raises:
        ValueError: the file is not in the exchange format.
    """
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("format") != EXCHANGE_FORMAT:
        raise ValueError(f"{path}: not a {EXCHANGE_FORMAT} file (format={doc.get('format')!r})")
    out: list[EventData] = []
    for turn in doc["turns"]:
        out.append(TurnStartData(mode=turn["mode"]))
        writes = {w["after_message"]: w for w in turn["todo_writes"]}
        for i, m in enumerate(turn["messages"]):
            out.append(Message.model_validate(m))
            if i in writes:
                todos = tuple(TodoItem.model_validate(t) for t in writes[i]["todos"])
                out.append(TodoWriteData(todos=todos))
        if turn["ended"]:
            out.append(TurnEndData(reason=turn.get("end_reason")))
    return out
