"""The compaction receipt: which ``on_compact_start`` hooks ran, and what each section left out.

Users of other agents ask what a compaction dropped and which hooks ran. Each
``compaction/checkpoint`` event answers both:

- ``hooks``: each ``on_compact_start`` hook in the order it ran, with its name, whether it
  vetoed and the text it added to the summarizer's instructions (`run_hooks`). A veto stops the
  compaction (``CompactionError("vetoed")``, which names the hook), so a recorded receipt only
  holds hooks that let it go on;
- ``dropped``: per narrative section, what the replaced span held that the section does not name
  (`dropped_sections`): a request that Primary Request and Intent left out, a recurring term,
  a file, a failure, a constraint still in force. Each item carries the seqs of the messages that
  hold it, so ``harness log LOG --seq N`` reads it back whole. The list is read from the span's
  facts (`compaction.summarizers.facts`) and the final Checkpoint, so it holds for any
  summarizer.

Invariants: the receipt is a pure function of the span, the hooks' answers and the Checkpoint;
at most `MAX_ITEMS` items a section and `MAX_SEQS` seqs an item are kept (``more`` counts the
rest).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

from compaction.checkpoint import Checkpoint, Section
from compaction.errors import CompactionError, ConfigError
from compaction.events import DroppedItem, DroppedSection, HookRun, surrogate_problem
from compaction.summarizers import SummaryInput

MAX_ITEMS: Final = 20
"""Most items one section's entry in the receipt lists."""
MAX_SEQS: Final = 5
"""Most seqs one item lists (the first ones that hold it)."""
ITEM_CHARS: Final = 200
"""Longest item text kept."""
HEAD: Final = 60
"""Characters of an item's head that show the section names it."""

P = TypeVar("P")
Hook = Callable[[P], "str | bool | None"]


def hook_name(hook: object) -> str:
    """Return a hook's name: its ``__name__``, else its class name."""
    name = getattr(hook, "__name__", None)
    return name if isinstance(name, str) and name else type(hook).__name__


def run_hooks(
    hooks: Sequence[Hook[P]], plan: P, instructions: str | None
) -> tuple[str | None, tuple[HookRun, ...]]:
    """Run each hook on the plan in order; return the instructions they leave and the receipt.

    A hook returns None to go on, False to veto, or text to add to the instructions.

    Raises:
        CompactionError: ``vetoed``, naming the hook that vetoed.
    """
    current = instructions.strip() if instructions else None
    runs: list[HookRun] = []
    for hook in hooks:
        answer = hook(plan)
        name = hook_name(hook)
        if answer is False:
            raise CompactionError(
                "vetoed", f"on_compact_start hook {name!r} vetoed the compaction; nothing was done"
            )
        added = answer.strip() if isinstance(answer, str) and answer.strip() else None
        if added and (
            problem := surrogate_problem(f"on_compact_start hook {name!r}'s text", added)
        ):
            raise ConfigError(f"{problem}; return valid Unicode text")
        if added:
            current = "\n".join(filter(None, [current, added]))
        runs.append(HookRun(name=name, added=added))
    return current or None, tuple(runs)


def _flat(text: str) -> str:
    return " ".join(text.split())


class _Haystacks:
    """Each message's searchable text (its text and its calls' arguments, flattened), by seq.

    `seqs_of(head)` returns the seqs of the first `MAX_SEQS` messages whose text holds `head`,
    the same as testing each message in turn, in one search: the texts are joined by line
    breaks, which no flattened head holds, so a match never spans two messages, and the search
    stops at the `MAX_SEQS`-th message found. They are searched as UTF-8 (where a match of
    whole characters is a match of their bytes), one byte a character for most text, where one
    wide character would make a joined `str` four bytes a character.
    """

    def __init__(self, span: SummaryInput) -> None:
        self.seqs = span.seqs[: len(span.messages)]
        texts = [
            _utf8(_flat(f"{m.text()} {' '.join(c.function.arguments for c in m.tool_calls or ())}"))
            for m in span.messages[: len(self.seqs)]
        ]
        self.ends = list(itertools.accumulate(len(t) + 1 for t in texts))
        """Where each message's text ends in `joined` (at its line break, or the end)."""
        self.joined = b"\n".join(texts)

    def seqs_of(self, head: str) -> tuple[int, ...]:
        """Return the seqs of the first messages whose flattened text holds `head` (flat)."""
        if "\n" in head:
            raise ValueError("a flattened head holds no line break")
        needle = _utf8(head)
        found: list[int] = []
        at = self.joined.find(needle)
        while at != -1 and len(found) < MAX_SEQS:
            i = bisect.bisect_right(self.ends, at)
            found.append(self.seqs[i])
            at = self.joined.find(needle, self.ends[i])
        return tuple(found)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _candidates(span: SummaryInput) -> dict[Section, list[str]]:
    """Return what the span holds that each narrative section could name, in span order."""
    facts = span.facts()
    return {
        Section.PRIMARY_REQUEST: list(dict.fromkeys(facts.requests)),
        Section.KEY_CONCEPTS: list(facts.terms),
        Section.FILES_AND_CODE: [path for _, path in facts.files()],
        Section.ERRORS_AND_FIXES: [r.failure for r in facts.runs.values() if r.failure],
        Section.CRITICAL_CONTEXT: list(dict.fromkeys(s for s, _ in facts.constraints)),
    }


def _named(item: str, text: str) -> bool:
    head = _flat(item)[:HEAD]
    return not head or head in text


def dropped_sections(checkpoint: Checkpoint, span: SummaryInput) -> tuple[DroppedSection, ...]:
    """Return, per narrative section, what the span held that the Checkpoint's section omits."""
    haystacks: _Haystacks | None = None
    out: list[DroppedSection] = []
    for section, items in _candidates(span).items():
        text = checkpoint.section(section)
        shown = _flat(text if isinstance(text, str) else "\n".join(text))
        left = [i for i in items if not _named(i, shown)]
        if not left:
            continue
        haystacks = haystacks or _Haystacks(span)
        listed = tuple(
            DroppedItem(text=_flat(i)[:ITEM_CHARS], seqs=haystacks.seqs_of(_flat(i)[:HEAD]))
            for i in left[:MAX_ITEMS]
        )
        out.append(
            DroppedSection(section=section.value, items=listed, more=len(left) - len(listed))
        )
    return tuple(out)
