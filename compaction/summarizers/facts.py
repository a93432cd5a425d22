"""What a span of the conversation says, read once: requests, constraints, files, runs, terms.

`read_span(span)` makes one pass over the messages being replaced and returns `SpanFacts`, which
the extractive summarizer lays out and the output checks of `compaction.summarizers._base` hold
every summarizer's narrative against. The rules, one function each:

- **Requests and constraints** come only from text a person typed: a user message whose
  `Message.origin` is ``user`` or absent. Injected context, skill bodies, command tags,
  interruption notices, mode messages and recorded summaries are never a request.
- **A constraint ends with the mode that set it**: a sentence with must/never/always/do not/...
  typed in a transient mode (Plan mode's "do not edit files yet") holds only while that mode
  lasts; a later turn in another mode or a mode message ends it.
- **Files** are edited ones (from edit/write tool calls: ``file_path``/``path`` arguments, the
  files an ``apply_patch`` names) and read ones (read/view tool calls), paths normalised to the
  working directory (inferred from absolute paths that end in a relative path seen elsewhere),
  deduplicated; a file both edited and read counts as edited.
- **Runs**: each command (a ``command``/``cmd``/``script`` argument, its first line) keeps its
  latest run: failed, with its first error line and the message line under a test failure
  header (`compaction.summarizers._failures`), or passed. The status a transcript recorded
  (`Message.failed`, `Message.exit_code`) counts too: a failed call with no error line is a
  failure named by its exit code and first line, and a later passing one fixes it.
- **Terms**: identifiers (``snake_case``, ``CamelCase``, ``dotted.names``, inline code) that
  recur in at least two of the requests, assistant statements and edits; tool names never;
  names common to every project of a language (``fmt.Errorf``, ``t.Fatalf``:
  `compaction.summarizers._common_names`) rank after the project's own.

Invariants: `read_span` is a pure function of the span.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from compaction.events import Message
from compaction.summarizers._common_names import is_common
from compaction.summarizers._failures import ERROR_MARK as ERROR_MARK
from compaction.summarizers._failures import LINE_CHARS as LINE_CHARS
from compaction.summarizers._failures import error_lines as error_lines
from compaction.summarizers._failures import status_line
from compaction.summarizers._paths import dedupe, home_of, normalise
from compaction.summarizers._paths import find_paths as find_paths
from compaction.summarizers._paths import looks_like_path as looks_like_path
from compaction.summarizers._paths import working_directory as working_directory

TRANSIENT_MODES: Final = frozenset({"plan"})
"""Modes whose instructions hold only while the mode lasts (Plan mode: "do not edit yet")."""

EDIT_TOOLS: Final = frozenset(
    {
        *("edit", "write", "multiedit", "notebookedit", "edit_file", "write_file", "replace"),
        *("create_file", "create", "str_replace_editor", "str_replace_based_edit_tool"),
        *("apply_patch", "patch", "insert", "write_to_file"),
    }
)
"""Tool names (lower case) that change a file."""
READ_TOOLS: Final = frozenset(
    {"read", "read_file", "view", "view_file", "cat", "open", "read_many_files", "open_file"}
)
"""Tool names (lower case) that read a file."""
QUIET_TOOLS: Final = READ_TOOLS | frozenset(
    {"grep", "glob", "search", "search_file_content", "find", "ls", "list_directory", "rg"}
)
"""Tools that read or search: their output quotes files, whose "error" lines are not errors."""
QUIET_COMMANDS: Final = frozenset(
    {"cat", "head", "tail", "less", "grep", "rg", "ag", "find", "ls", "wc", "sed", "awk", "nl"}
)
"""Shell commands that read or search (the first word of a command without a pipeline)."""


def reads_or_searches(tool: str, command: str) -> bool:
    """Tell whether a call only reads or searches: a read/search tool, or such a command.

    A pipeline (``pytest | tail``) or a command list (``make && cat log``) runs more than a read,
    so its error lines count.
    """
    if not command:
        return tool.lower() in QUIET_TOOLS
    if any(sep in command for sep in ("|", "&&", ";", "||")):
        return False
    words = command.split()
    return bool(words) and words[0].rsplit("/", 1)[-1] in QUIET_COMMANDS


PATH_KEYS: Final = ("file_path", "path", "notebook_path", "absolute_path", "filename", "file")
COMMAND_KEYS: Final = ("command", "cmd", "script")
FAILURE_CHARS: Final = 200
"""Longest failure (error line and message) kept for one command."""

_PASSED = re.compile(r"\b(?:passed|PASS|ok)\b|^\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
CONSTRAINT_WORD: Final = re.compile(
    r"\b(?:must|never|do not|don't|make sure|important:)|^(?:please\s+)?(?:always|only|avoid)\b",
    re.IGNORECASE,
)
"""A constraint: must, never, do not, make sure anywhere; always, only, avoid as an order."""
_INLINE_CODE = re.compile(r"`([^`\n]{2,60})`")
_IDENTIFIER = re.compile(
    r"(?<![\w./-])(?:[A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*"
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\(\)?)(?![\w/])"
)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)


def is_request(message: Message) -> bool:
    """Tell whether a message is text a person typed (a user message of origin user or none)."""
    return message.role == "user" and message.origin in (None, "user")


def tool_arguments(arguments: str) -> dict[str, Any]:
    """Return a tool call's arguments as a dict (empty when they are not a JSON object)."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def command_of(args: dict[str, Any]) -> str:
    """Return the command a tool call runs (first line, clipped), or empty."""
    for key in COMMAND_KEYS:
        value = args.get(key)
        text = " ".join(str(v) for v in value) if isinstance(value, list) else value
        if isinstance(text, str) and text.strip():
            line = text.strip().split("\n", 1)[0]
            return line[:LINE_CHARS]
    return ""


@dataclass
class Run:
    """The latest run of one command."""

    command: str
    failure: str = ""
    """The first error line (and message) of the latest failed run; empty if it never failed."""
    fixed: bool = False
    """True when a run after the latest failure passed."""
    failed_at: int = 0
    """Which result of the span the latest failure was (1 for the first): orders failures."""


@dataclass
class SpanFacts:
    """What one pass over a span found, each kind in order of (latest) appearance."""

    requests: list[str] = field(default_factory=list)
    """Text of each user message a person typed."""
    constraints: list[tuple[str, str | None]] = field(default_factory=list)
    """Constraint sentences a person typed, with the mode they were typed in."""
    edited: dict[str, None] = field(default_factory=dict)
    read: dict[str, None] = field(default_factory=dict)
    runs: dict[str, Run] = field(default_factory=dict)
    """The latest run of each command (or tool and path, for other tools that failed)."""
    terms: list[str] = field(default_factory=list)
    intent: str = ""
    """The latest assistant statement after the latest request (empty when none)."""
    summaries: list[str] = field(default_factory=list)
    """Recorded summaries of another agent found in the span."""
    ended: list[str] = field(default_factory=list)
    """Constraint sentences whose transient mode has ended (no longer in force)."""
    injected: list[str] = field(default_factory=list)
    """Text of user messages no person typed (skill bodies, command tags, notices...)."""
    tools: set[str] = field(default_factory=set)

    def files(self, known: Sequence[str] = (), cwd: str | None = None) -> list[tuple[str, str]]:
        """Return ``(kind, path)`` pairs: edited files first, then read ones, normalised.

        `cwd` is the working directory the log recorded (`TurnStartData.cwd`); without it, it
        is inferred from the paths, and `known` (relative paths named before the span, say in
        the previous Checkpoint) helps tell it.
        """
        absolute = [*self.edited, *self.read]
        root = cwd or working_directory(absolute, [*self.mentioned, *known])
        home = home_of(cwd or "") or next((h for p in absolute if (h := home_of(p))), "")
        edited = dedupe(normalise(p, root, home) for p in self.edited)
        read = [p for p in dedupe(normalise(p, root, home) for p in self.read) if p not in edited]
        return [("edited", p) for p in edited] + [("read", p) for p in read]

    mentioned: list[str] = field(default_factory=list)
    """Relative paths mentioned anywhere, to infer the working directory."""


def _identifiers(text: str) -> dict[str, None]:
    """Return the identifiers of `text`, in order of first appearance.

    Never a set: the order reaches the Checkpoint, and set order changes with the hash seed.
    """
    found = dict.fromkeys(m.group().rstrip("()") for m in _IDENTIFIER.finditer(text))
    for code in _INLINE_CODE.findall(text):
        found.update(dict.fromkeys(m.group().rstrip("()") for m in _IDENTIFIER.finditer(code)))
    return {t: None for t in found if len(t) > 3 and not looks_like_path(t)}


def constraint_sentences(text: str) -> Iterator[str]:
    """Yield the sentences of `text` that state a constraint (must, never, do not, ...)."""
    for line in text.split("\n"):
        for sentence in _SENTENCE_END.split(line.strip()):
            if CONSTRAINT_WORD.search(sentence) and not sentence.rstrip().endswith("?"):
                yield sentence[:LINE_CHARS]


class _Reader:
    """One pass over a span."""

    def __init__(self, mode_now: str | None) -> None:
        self.facts = SpanFacts()
        self.mode_now = mode_now
        self.calls: dict[str, tuple[str, bool, bool]] = {}
        """Open calls by id: the run key, whether it ran a command, whether it only reads."""
        self.sources: list[dict[str, None]] = []
        self.results = 0
        """Tool results read so far (orders the failures)."""

    def add(self, message: Message, mode: str | None) -> None:
        text = message.text()
        if message.role == "user":
            self._user(message, text, mode)
        elif message.role == "assistant":
            if text.strip():
                self.facts.intent = text
                self.sources.append(_identifiers(text))
                self.facts.mentioned += [p for p in find_paths(text) if not p.startswith("/")]
            for call in message.tool_calls or ():
                self._call(call.id, call.function.name, call.function.arguments)
        elif message.role == "tool" and message.tool_call_id in self.calls:
            key, ran, quiet = self.calls.pop(message.tool_call_id)
            passed = message.failed is False or message.exit_code == 0
            # A read or search that succeeded quotes files: its "error" lines are no errors.
            shown = "" if quiet and passed else text
            self._result(key, shown, message if ran or shown != text else None)

    def _user(self, message: Message, text: str, mode: str | None) -> None:
        if message.origin == "recorded_summary":
            self.facts.summaries.append(text)
            return
        if not is_request(message):
            self.facts.injected.append(text)
            if message.origin == "mode_switch":
                self._end_modes(keep=None)
            return
        self.facts.intent = ""  # a new request makes what the agent meant to do before stale
        self.facts.requests.append(text)
        self.facts.constraints += [(s, mode) for s in constraint_sentences(text)]
        self.sources.append(_identifiers(text))
        self.facts.mentioned += [p for p in find_paths(text) if not p.startswith("/")]

    def _call(self, call_id: str, name: str, arguments: str) -> None:
        self.facts.tools.add(name)
        args = tool_arguments(arguments)
        lower = name.lower()
        paths = [v for k in PATH_KEYS if isinstance(v := args.get(k), str) and looks_like_path(v)]
        command = command_of(args)
        if lower in EDIT_TOOLS and not (
            lower.startswith("str_replace") and args.get("command") == "view"
        ):
            patch = next((v for v in args.values() if isinstance(v, str) and "*** " in v), "")
            paths += [p.strip() for p in _PATCH_FILE.findall(patch)]
            for path in paths:
                self.facts.edited.pop(path, None)
                self.facts.edited[path] = None
            terms: dict[str, None] = {}
            for value in args.values():
                terms.update(_identifiers(str(value)))
            self.sources.append(terms)
            command = ""
        elif lower in READ_TOOLS:
            for path in paths:
                self.facts.read.pop(path, None)
                self.facts.read[path] = None
        if command:
            self.facts.mentioned += [p for p in find_paths(command) if not p.startswith("/")]
        key = command or (f"{name} {paths[0]}" if paths else name)
        self.calls[call_id] = (key, bool(command), reads_or_searches(name, command))

    def _result(self, key: str, text: str, status: Message | None) -> None:
        """Record a run: failed on an error line, or on a command's recorded failed status."""
        self.results += 1
        errors = error_lines(text)
        failed = None if status is None else status.failed
        if failed and not errors:
            errors = [status_line(text, status.exit_code if status else None)]
        run = self.facts.runs.pop(key, None) or Run(command=key)
        if errors:
            # A bare "Exit code 1" says less than the compiler or test line under it.
            telling = [e for e in errors if not e.startswith("Exit code")] or errors
            run.failure, run.fixed = telling[0][:FAILURE_CHARS], False
            run.failed_at = self.results
        elif run.failure and (failed is False or _PASSED.search(text)):
            run.fixed = True
        if run.failure:
            self.facts.runs[key] = run

    def _end_modes(self, keep: str | None) -> None:
        """End the constraints of every transient mode but `keep`."""
        kept = []
        for sentence, mode in self.facts.constraints:
            if mode in TRANSIENT_MODES and mode != keep:
                self.facts.ended.append(sentence)
            else:
                kept.append((sentence, mode))
        self.facts.constraints = kept

    def finish(self) -> SpanFacts:
        facts = self.facts
        self._end_modes(keep=self.mode_now)
        counts: Counter[str] = Counter()
        for source in self.sources:
            # Each source is a dict in order of first appearance (never a set, whose order
            # follows the hash seed), so ties keep first-seen order.
            counts.update(source.keys())
        tools = {t.lower() for t in facts.tools}
        terms = [t for t, n in counts.most_common() if n >= 2 and t.lower() not in tools]
        facts.terms = sorted(terms, key=is_common)  # stable: common names last, same order
        return facts


def read_span(
    messages: Sequence[Message], modes: Sequence[str | None] = (), mode_now: str | None = None
) -> SpanFacts:
    """Read a span once; `modes` gives the mode each message was written in (default none)."""
    reader = _Reader(mode_now)
    for i, message in enumerate(messages):
        reader.add(message, modes[i] if i < len(modes) else None)
    return reader.finish()
