"""The extractive summarizer: the default, offline, deterministic, no model.

It lays out what `compaction.summarizers.facts` reads from the span (only text a person typed is
a request or a constraint):

- the user's requests (verbatim when short, the head of each otherwise; the first request of the
  session is always kept) into Primary Request and Intent, after any recorded summary of
  another agent found in the span (quoted, see `compaction.summarizers.recorded`);
- identifiers that recur across requests, statements and edits (never tool names) into Key
  Technical Concepts;
- edited files, then read ones, relative to the working directory the log recorded (else one
  inferred from the paths), home as ``~``, into Files and Code;
- the latest failure of each command, with its message line, marked fixed once a later run of
  the same command passed, into Errors and Fixes;
- the latest assistant statement after the latest request (its last paragraph, whole) into
  Next Step, then held to the tasks and clipped by `check_output`;
- the user's constraints still in force (a transient mode's end with it), and the focus
  instructions of this compaction, into Critical Context;

and folds the previous Checkpoint's narrative in: older entries come first, duplicates collapse,
and when a section passes its share of the budget its oldest entries go first (the session's
first request stays; edited files go last). Entry formats live in
``compaction/templates/extractive.md.j2``.

Invariants: the extractive summarizer's output is a pure function of its input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from compaction.checkpoint import Section
from compaction.summarizers._base import SummaryInput, split_entries
from compaction.summarizers._entries import clip, entry
from compaction.summarizers.facts import TRANSIENT_MODES, SpanFacts, find_paths, looks_like_path
from compaction.summarizers.recorded import read_recorded
from compaction.tokens import Tokenizer, get_tokenizer

__all__ = ["ExtractiveSummarizer", "find_paths", "looks_like_path", "split_entries"]

REQUEST_CHARS: Final = 800
"""A user request up to this length is copied verbatim; a longer one, its head."""
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

_FILE_ENTRY = re.compile(r"^- (edited|read) `(.+)`$")
_FAILURE_ENTRY = re.compile(r"^- `(.+?)` failed: ")
_MODE_ENTRY = re.compile(r"^- while in (\S+) mode: ")


def _indent_continuation(text: str) -> str:
    return text.strip("\n").replace("\n", "\n  ")


def _request_entries(requests: Sequence[str]) -> list[str]:
    return [
        entry("request", text=_indent_continuation(clip(r.strip(), REQUEST_CHARS)))
        for r in requests
        if r.strip()
    ]


def _files(previous: list[str], facts: SpanFacts, cwd: str | None) -> tuple[list[str], list[str]]:
    """Return (edited, read) entries: previous ones merged with the span's, newest last.

    With the log's `cwd`, paths are exact, so two paths are one file only when equal; without
    it, a path that ends another one (``cli/types.go``, ``cmd/x/cli/types.go``) is taken as the
    same file named from a guessed root and dropped.
    """
    edited: dict[str, None] = {}
    read: dict[str, None] = {}
    other: list[str] = []
    for old in previous:
        match = _FILE_ENTRY.match(old)
        if match is None:
            other.append(old)
        else:
            (edited if match.group(1) == "edited" else read)[match.group(2)] = None
    for kind, path in facts.files(known=[*edited, *read], cwd=cwd):
        target = edited if kind == "edited" else read
        target.pop(path, None)
        target[path] = None
    for path in edited:
        read.pop(path, None)
    for paths in () if cwd else (edited, read):
        for short in [p for p in paths if any(q.endswith("/" + p) for q in [*edited, *read])]:
            del paths[short]  # the same file, named from a deeper directory
    return [entry("edited", path=p) for p in edited], other + [entry("read", path=p) for p in read]


def _errors(previous: list[str], facts: SpanFacts) -> list[str]:
    kept = []
    for old in previous:
        match = _FAILURE_ENTRY.match(old)
        if match is None or match.group(1) not in facts.runs:
            kept.append(old)
    new = [
        entry("failure", command=r.command, text=r.failure, fixed=r.fixed)
        for r in facts.runs.values()
    ]
    return kept + new[-MAX_ENTRIES:]


def _constraints(previous: list[str], facts: SpanFacts, span: SummaryInput) -> list[str]:
    kept = []
    for old in previous:
        match = _MODE_ENTRY.match(old)
        if (match is None or match.group(1) == span.mode) and not any(
            e in old for e in facts.ended
        ):
            kept.append(old)
    new = [
        entry("mode_constraint", text=text, mode=mode)
        if mode is not None and mode == span.mode and mode in TRANSIENT_MODES
        else entry("constraint", text=text)
        for text, mode in facts.constraints
    ]
    instructions = " ".join((span.instructions or "").split())
    focus = [entry("focus", text=clip(instructions, REQUEST_CHARS))] if instructions else []
    return focus + kept + new


def _previous(span: SummaryInput, facts: SpanFacts) -> dict[Section, list[str]]:
    """The previous Checkpoint's entries, then those of recorded summaries in the span."""
    narrative = span.previous.narrative() if span.previous else {}
    out = {name: split_entries(narrative.get(name, "")) for name in SECTION_SHARES}
    for summary in facts.summaries:
        for name, entries in read_recorded(summary, "recorded").items():
            if name in out:
                out[name] += entries
    return out


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
        facts = span.facts()
        previous = _previous(span, facts)
        edited, read = _files(previous[Section.FILES_AND_CODE], facts, span.cwd)
        new: dict[Section, list[str]] = {
            Section.PRIMARY_REQUEST: _merge(
                previous[Section.PRIMARY_REQUEST], _request_entries(facts.requests), keep_first=True
            ),
            Section.KEY_CONCEPTS: _merge(
                previous[Section.KEY_CONCEPTS],
                [entry("concept", term=t) for t in reversed(facts.terms[:MAX_ENTRIES])],
                keep_first=False,
            ),
            Section.ERRORS_AND_FIXES: _errors(previous[Section.ERRORS_AND_FIXES], facts),
            Section.CRITICAL_CONTEXT: _merge(
                [], _constraints(previous[Section.CRITICAL_CONTEXT], facts, span), keep_first=True
            ),
        }
        out: dict[str, str] = {}
        for name, share in SECTION_SHARES.items():
            budget = int(span.budget_tokens * share)
            if name == Section.NEXT_STEP:
                # Whole: `check_output` asks "is it a question?" of the whole statement, then
                # clips it at a sentence or clause end (a clipped question is still one).
                intent = _last_paragraph(facts.intent)
                text = entry("intent", text=intent) if intent else ""
                stale = bool(facts.requests)  # the previous Next Step predates a new request
                out[name] = text or ("" if stale else "\n".join(previous[name]))
            elif name == Section.FILES_AND_CODE:
                out[name] = self._fit_ranked(edited, read, budget)
            else:
                pin = name in (Section.PRIMARY_REQUEST, Section.CRITICAL_CONTEXT) and bool(
                    name == Section.PRIMARY_REQUEST or (span.instructions or "").strip()
                )
                out[name] = self._fit(new[name], budget, pin_first=pin)
        return out

    def _fit_ranked(self, first: list[str], then: list[str], budget: int) -> str:
        """Keep the newest of `first`, then the newest of `then`, in their order, within budget."""
        used = 0
        keep: set[int] = set()
        ranked = [*reversed(list(enumerate(first))), *reversed(list(enumerate(then, len(first))))]
        for index, text in ranked:
            cost = self.tokenizer.count(text) + 1
            if used + cost > budget:
                break
            keep.add(index)
            used += cost
        return "\n".join(e for i, e in enumerate([*first, *then]) if i in keep)

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
        for item in reversed(rest[-MAX_ENTRIES:]):
            cost = self.tokenizer.count(item) + 1
            if used + cost > budget:
                break
            kept.append(item)
            used += cost
        if not kept and rest and not first:
            kept.append(rest[-1][: max(budget, 1) * 3])  # the newest entry, clipped, at least
        return "\n".join(([first] if first else []) + kept[::-1])


def _merge(old: list[str], new: list[str], *, keep_first: bool) -> list[str]:
    merged: dict[str, None] = {}
    for item in [*old, *new]:
        if keep_first and item in merged:
            continue
        merged.pop(item, None)
        merged[item] = None
    return list(merged)


def _last_paragraph(text: str) -> str:
    paragraphs = [p.strip() for p in text.strip().split("\n\n") if p.strip()]
    return paragraphs[-1] if paragraphs else ""
