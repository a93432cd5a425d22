"""A long tool result counted once, in segments, so the clip check can count its head and tail.

The clip check needs the tokens of the whole result, then of a head and a tail of it (shrunk
until they fit the cap). `cut_counts` counts the text in segments between cuts (`tokens._CUT`:
where tiktoken's pre-tokenizer splits in any context), about `STEP` characters apart, so the
count of a head is the counts of the segments it holds plus a count of what is left of it past
its last cut (and a tail's likewise): at most one segment's worth of text is tokenized again,
not the whole head and tail.

Invariants: every count here equals ``tokenizer.count`` of the same text (the parts of a text cut
where the pre-tokenizer must split count as the whole: `tests/property/test_split_count_props.py`);
a cut is used for a head only where it is a cut of the head itself (its look-ahead inside it),
and for a tail only where the character before its line break is inside the tail.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import Final

from compaction.tokens import _CUT, SplitCount, TiktokenTokenizer, Tokenizer

STEP: Final = 2048
"""Characters between the cuts a text is counted at (at least)."""
LAST_TRIES: Final = 64
"""Line breaks looked at, from the end, for the text's last cut."""


@dataclass(frozen=True, slots=True)
class CutCounts:
    """A text's tokens, counted at cuts: before the first, between each two, after the last."""

    text: str
    cuts: tuple[int, ...]
    """Offsets just past a cut, increasing (at least one)."""
    before: int
    """Tokens of the text up to the first cut."""
    upto: tuple[int, ...]
    """Tokens of the text from the first cut to each cut (0 for the first)."""
    after: int
    """Tokens of the text from the last cut on."""

    @property
    def total(self) -> int:
        """Return the tokens of the whole text."""
        return self.before + self.upto[-1] + self.after

    def whole(self) -> SplitCount:
        """Return the whole text as a `SplitCount` (head and tail kept as text)."""
        return SplitCount(self.text[: self.cuts[0]], self.upto[-1], self.text[self.cuts[-1] :])

    def head(self, tokenizer: Tokenizer, chars: int) -> tuple[SplitCount, int]:
        """Return the first `chars` characters as a `SplitCount`, and their tokens."""
        end = chars
        for j in range(len(self.cuts) - 1, -1, -1):
            cut = self.cuts[j]
            # A cut at the head's very end is not one of the head's: what follows the head (a
            # line break) may join its last line break in one pre-token.
            if cut < end and _is_cut(self.text, cut, end):
                rest = self.text[cut:end]
                part = SplitCount(self.text[: self.cuts[0]], self.upto[j], rest)
                return part, self.before + self.upto[j] + tokenizer.count(rest)
        text = self.text[:end]
        return SplitCount(text, 0, ""), tokenizer.count(text)

    def tail(self, tokenizer: Tokenizer, chars: int) -> tuple[SplitCount, int]:
        """Return the last `chars` characters as a `SplitCount`, and their tokens."""
        start = len(self.text) - chars
        for j, cut in enumerate(self.cuts):
            if cut - 2 >= start:  # the visible character before the cut's line break is in it
                lead = self.text[start:cut]
                part = SplitCount(lead, self.upto[-1] - self.upto[j], self.text[self.cuts[-1] :])
                return part, tokenizer.count(lead) + part.middle_tokens + self.after
        text = self.text[start:]
        return SplitCount(text, 0, ""), tokenizer.count(text)


def _is_cut(text: str, cut: int, end: int) -> bool:
    """Tell whether `cut` is a cut of ``text[:end]`` too (its look-ahead inside it)."""
    found = _CUT.match(text, cut - 2, end)
    return found is not None and found.end() == cut


def _last_cut(text: str, floor: int) -> int:
    """Return the offset past the text's last cut after `floor`.

    `floor` when there is none near the end: only the last `LAST_TRIES` line breaks are looked at.
    """
    k = len(text)
    for _ in range(LAST_TRIES):
        k = text.rfind("\n", floor, k)
        if k < floor:
            break
        if k >= 1 and _CUT.match(text, k - 1):
            return k + 1
    return floor


def cut_counts(tokenizer: Tokenizer, text: str, step: int = STEP) -> CutCounts | None:
    """Count `text` in segments between cuts at least `step` characters apart.

    Returns None when the text has no cut, or for a tokenizer other than `TiktokenTokenizer`
    (whose splits `_CUT` does not know).
    """
    if not isinstance(tokenizer, TiktokenTokenizer):
        return None
    cuts: list[int] = []
    pos = 0
    while (found := _CUT.search(text, pos)) is not None:
        cuts.append(found.end())
        pos = found.end() + step
    if not cuts:
        return None
    end = _last_cut(text, cuts[-1])
    if end > cuts[-1]:
        cuts.append(end)  # the tail left as text is short, so the usage view counts little again
    segments = (tokenizer.count(text[a:b]) for a, b in pairwise(cuts))
    upto = tuple(accumulate(segments, initial=0))
    before = tokenizer.count(text[: cuts[0]])
    return CutCounts(text, tuple(cuts), before, upto, tokenizer.count(text[cuts[-1] :]))
