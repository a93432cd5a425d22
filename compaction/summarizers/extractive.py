"""The extractive summarizer: the default, offline, deterministic, no model.

It copies

- the user's requests (verbatim when short, the head of each otherwise; the first request of the
  session is always kept) into Primary Request and Intent;
- inline-code terms and the names of the tools used into Key Technical Concepts;
- file paths mentioned by the user, the assistant or in tool-call arguments, and the commands
  run (``command``/``cmd``/``script`` arguments), into Files and Code;
- error lines of tool results and assistant text (``SomeError:``, ``error:``, ``fatal:``,
  ``FAILED``, ``N failed``; not source lines such as ``raise SomeError(...)``) into Errors and
  Fixes;
- the latest assistant statement (its last paragraph) into Next Step;
- the user's constraints (sentences with must, never, always, do not, make sure, important) into
  Critical Context;

and folds the previous Checkpoint's narrative in: older entries come first, duplicates collapse,
and when a section passes its share of the budget its oldest entries go first (the session's
first request stays). Entry formats live in ``compaction/templates/extractive.md.j2``.

Invariants: the extractive summarizer's output is a pure function of its input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any, Final

from jinja2.environment import TemplateModule

from compaction.checkpoint import Section, template_environment
from compaction.events import Message
from compaction.summarizers.base import SummaryInput
from compaction.tokens import Tokenizer, get_tokenizer

REQUEST_CHARS: Final = 800
"""A user request up to this length is copied verbatim; a longer one, its head."""
LINE_CHARS: Final = 240
"""Longest error, command or constraint line kept."""
MAX_ENTRIES: Final = 64
"""Most entries of one kind considered from one span, the latest ones."""

SECTION_SHARES: Final[dict[Section, float]] = {
    Section.PRIMARY_REQUEST: 0.30,
    Section.KEY_CONCEPTS: 0.10,
    Section.FILES_AND_CODE: 0.20,
    Section.ERRORS_AND_FIXES: 0.15,
    Section.NEXT_STEP: 0.10,
    Section.CRITICAL_CONTEXT: 0.15,
}
"""Share of the budget each narrative section may use."""

_ERROR_MARK = re.compile(r"(?:rror|xception|fatal|panic)(?:\[\w+\])?:|FAILED|\d failed\b")
"""Marks of an error line: literals, so that scanning large tool outputs stays fast."""
_CODE_LINE = re.compile(r"^(?:\d+\s+)?(?:except|raise|class|def|catch|throw|import|from|#|//)\b")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_CONSTRAINT_WORD = re.compile(
    r"\b(?:must|never|always|do not|don't|make sure|important)\b", re.IGNORECASE
)
_INLINE_CODE = re.compile(r"`([^`\n]{2,60})`")
_PATH_TOKEN = re.compile(r"[\w~./-]*[./][\w~./-]*\w")
_KNOWN_EXTENSIONS: Final = frozenset(
    (
        *("py", "pyi", "md", "rst", "txt", "toml", "yaml", "yml", "json", "jsonl", "cfg", "ini"),
        *("lock", "sh", "bash", "js", "mjs", "ts", "tsx", "jsx", "css", "html", "rs", "go", "c"),
        *("h", "cc", "cpp", "hpp", "java", "kt", "rb", "php", "sql", "csv", "ipynb", "j2", "tf"),
        *("proto", "xml"),
    )
)
_COMMAND_KEYS: Final = ("command", "cmd", "script")


@cache
def _macros() -> TemplateModule:
    return template_environment().get_template("extractive.md.j2").module


def _entry(kind: str, **values: object) -> str:
    """Format one entry with the macro `kind` of ``extractive.md.j2``."""
    return str(getattr(_macros(), kind)(**values))


def _indent_continuation(text: str) -> str:
    return text.strip("\n").replace("\n", "\n  ")


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return _entry("truncated", head=text[:limit].rstrip(), omitted=len(text) - limit)


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if line == text.strip() else line + " …"


def looks_like_path(token: str) -> bool:
    """Tell whether a token reads as a file path (has a slash, or a known file extension)."""
    token = token.rstrip(".")
    if (
        not token
        or any(c.isspace() for c in token)
        or token.startswith("//")
        or ".." in token.replace("../", "")
        or len(token) > 200
    ):
        return False
    last = token.rsplit("/", 1)[-1]
    ext = last.rsplit(".", 1)[-1].lower() if "." in last.strip(".") else ""
    if "/" in token:
        rooted = token.startswith(("/", "./", "../", "~/"))
        return (rooted and len(token) > 2) or ext in _KNOWN_EXTENSIONS
    return ext in _KNOWN_EXTENSIONS and len(last) > len(ext) + 1


def find_paths(text: str) -> Iterator[str]:
    """Yield the file paths mentioned in `text`, in order of appearance."""
    for match in _PATH_TOKEN.finditer(text):
        start = match.start()
        if start >= 3 and text[start - 3 : start] == "://":
            continue
        token = match.group().rstrip(".")
        if looks_like_path(token):
            yield token


def _tool_arguments(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _command_text(value: object) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return value if isinstance(value, str) else ""


class _Facts:
    """What one pass over a span extracts, each kind as ordered entries."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.concepts: dict[str, None] = {}
        self.files: dict[str, None] = {}
        self.errors: dict[str, None] = {}
        self.constraints: dict[str, None] = {}
        self.intent = ""

    def add(self, message: Message) -> None:
        text = message.text()
        if message.role == "user":
            # A new request makes what the agent meant to do before it stale.
            self.intent = ""
            self.requests.append(text)
            self._constraints(text)
            self._concepts(text)
            self._files(find_paths(text))
        elif message.role == "assistant":
            if text.strip():
                self.intent = text
            self._concepts(text)
            self._files(find_paths(text))
            self._errors(text)
            for call in message.tool_calls or ():
                self._tool_call(call.function.name, call.function.arguments)
        elif message.role == "tool":
            self._errors(text)

    def _concepts(self, text: str) -> None:
        for term in _INLINE_CODE.findall(text):
            _touch(self.concepts, _entry("concept", term=term.strip()))

    def _files(self, paths: Iterable[str]) -> None:
        for path in paths:
            _touch(self.files, _entry("file", path=path))

    def _errors(self, text: str) -> None:
        end = -1
        for match in _ERROR_MARK.finditer(text):
            if match.start() < end:
                continue  # a second mark on a line already taken
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            end = end if end >= 0 else len(text)
            line = text[start:end].strip()
            if not _CODE_LINE.match(line):
                _touch(self.errors, _entry("error", text=_clip(line, LINE_CHARS)))

    def _constraints(self, text: str) -> None:
        for line in text.split("\n"):
            if not _CONSTRAINT_WORD.search(line):
                continue
            for sentence in _SENTENCE_END.split(line.strip()):
                if _CONSTRAINT_WORD.search(sentence):
                    entry = _entry("constraint", text=_clip(sentence, LINE_CHARS))
                    _touch(self.constraints, entry)

    def _tool_call(self, name: str, arguments: str) -> None:
        _touch(self.concepts, _entry("tool", name=name))
        args = _tool_arguments(arguments)
        for key in _COMMAND_KEYS:
            command = _command_text(args.get(key)).strip()
            if command:
                clipped = _clip(_first_line(command), LINE_CHARS)
                _touch(self.files, _entry("command", text=clipped))
                self._files(find_paths(command))
        for value in args.values():
            if isinstance(value, str) and looks_like_path(value):
                self._files([value])


def _touch(entries: dict[str, None], entry: str) -> None:
    """Record an entry as the most recent one (duplicates move to the end)."""
    entries.pop(entry, None)
    entries[entry] = None
    if len(entries) > 4 * MAX_ENTRIES:
        del entries[next(iter(entries))]


def split_entries(text: str) -> list[str]:
    """Split a section's text into entries: a line starting ``- `` opens one, others continue."""
    entries: list[str] = []
    for line in text.split("\n"):
        if entries and not line.startswith("- "):
            entries[-1] += "\n" + line
        elif line.strip():
            entries.append(line)
    return entries


class ExtractiveSummarizer:
    """The default summarizer: copies requests, paths, commands, errors and intent; no model.

    Args:
        tokenizer: counts tokens against the budget (default `o200k_base`).
    """

    def __init__(self, tokenizer: Tokenizer | None = None) -> None:
        self.tokenizer = tokenizer or get_tokenizer()

    @property
    def name(self) -> str:
        """Return ``extractive``."""
        return "extractive"

    def summarize(self, span: SummaryInput) -> dict[str, str]:
        """Return the six narrative sections for the span, the previous Checkpoint folded in."""
        facts = _Facts()
        for message in span.messages:
            facts.add(message)
        previous = span.previous.narrative() if span.previous else dict.fromkeys(SECTION_SHARES, "")
        requests = [
            _entry("request", text=_indent_continuation(_clip(r.strip(), REQUEST_CHARS)))
            for r in facts.requests
            if r.strip()
        ]
        new: dict[Section, list[str]] = {
            Section.PRIMARY_REQUEST: requests,
            Section.KEY_CONCEPTS: list(facts.concepts),
            Section.FILES_AND_CODE: list(facts.files),
            Section.ERRORS_AND_FIXES: list(facts.errors),
            Section.CRITICAL_CONTEXT: list(facts.constraints),
        }
        out: dict[str, str] = {}
        for name, share in SECTION_SHARES.items():
            budget = int(span.budget_tokens * share)
            if name == Section.NEXT_STEP:
                intent = _last_paragraph(facts.intent)
                text = _entry("intent", text=_clip(intent, REQUEST_CHARS)) if intent else ""
                stale = bool(facts.requests)  # the previous Next Step predates a new request
                fallback = "" if stale else previous[name]
                out[name] = self._fit([text or fallback], budget, pin_first=True)
                continue
            merged = _merge(split_entries(previous[name]), new[name], keep_first=name in _CHRONO)
            out[name] = self._fit(merged, budget, pin_first=name == Section.PRIMARY_REQUEST)
        return out

    def _fit(self, entries: list[str], budget: int, *, pin_first: bool) -> str:
        """Keep the newest entries that fit the budget (and the first one when pinned)."""
        entries = [e for e in entries if e.strip()]
        if not entries:
            return ""
        first, rest = (entries[0], entries[1:]) if pin_first else ("", entries)
        used = self.tokenizer.count(first) if first else 0
        if used > budget:
            first = first[: max(budget, 1) * 2]
            used = self.tokenizer.count(first)
        kept: list[str] = []
        for entry in reversed(rest[-MAX_ENTRIES:]):
            cost = self.tokenizer.count(entry) + 1
            if used + cost > budget:
                break
            kept.append(entry)
            used += cost
        return "\n".join(([first] if first else []) + kept[::-1])


_CHRONO: Final = frozenset({Section.PRIMARY_REQUEST})
"""Sections kept in order of first appearance; the others move a repeated entry to the end."""


def _merge(old: list[str], new: list[str], *, keep_first: bool) -> list[str]:
    merged: dict[str, None] = {}
    for entry in [*old, *new]:
        if keep_first and entry in merged:
            continue
        merged.pop(entry, None)
        merged[entry] = None
    return list(merged)


def _last_paragraph(text: str) -> str:
    paragraphs = [p.strip() for p in text.strip().split("\n\n") if p.strip()]
    return paragraphs[-1] if paragraphs else ""
