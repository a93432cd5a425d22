"""Oversized tool outputs: kept whole in the log, shown to the model as head and tail.

A tool result whose text takes more tokens than the session's cap (`Session(tool_output_cap=)`,
by default 0.1 of a 128,000-token window; `CompactionPolicy.tool_output_tokens` gives it for
a policy) is recorded whole, with a `ClipData` that says how many characters of its head and
tail the model sees. The context view (`shown_message`) shows the head, then a one-line note
(`templates/clip_note.md`) saying how many tokens were left out and how to read them back
(`harness log LOG --seq N`, `Session.event(N)`), then the tail.

The decision is made once, when the result is appended, and recorded in the event, so the bytes
the model saw never change afterwards (the provider's prefix cache stays valid), whatever cap a
later reader uses. A clipped result is shown as text (image blocks are left out with the rest).

Invariants: the shown text is a pure function of the event (text, clip, seq); the head and
tail take at most the cap's tokens besides the note; a result at or under the cap is untouched.
A tiktoken token is at least one UTF-8 byte, so a text of at most `cap` bytes is under the cap
without being tokenized (the usage view then counts it once, as it must anyway). A text the check
does tokenize is counted in parts (`compaction.tokens.split_count`), and `clip_and_count` hands
those parts on (`ShownCount`), so the usage view counts the shown message without tokenizing the
text again.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Final

from compaction.events import ClipData, Message
from compaction.tokens import (
    MESSAGE_OVERHEAD,
    SplitCount,
    TiktokenTokenizer,
    Tokenizer,
    count_joined,
    message_affixes,
    split_count,
)
from compaction.views._clip_counts import CutCounts, cut_counts

HEAD_SHARE: Final = 2 / 3
"""Share of the kept tokens given to the head (the start of a log says what ran; the end, how
it ended)."""
NOTE_TOKENS: Final = 64
"""Tokens set aside for the note, out of the cap."""


@cache
def _note_template() -> str:
    return (
        resources.files("compaction")
        .joinpath("templates", "clip_note.md")
        .read_text(encoding="utf-8")
        .strip()
    )


def clip_note(omitted_tokens: int, omitted_chars: int, seq: int) -> str:
    """Return the one-line note shown where a tool result was cut."""
    return _note_template().format(
        omitted_tokens=omitted_tokens, omitted_chars=omitted_chars, seq=seq
    )


@dataclass(frozen=True, slots=True)
class ShownCount:
    """What the clip check counted of a tool result: enough to count the message the model sees.

    `tokens` returns ``count_message(tokenizer, shown_message(message, seq))`` for the message
    the check returned, tokenizing only the texts around the counted parts (and the note).
    """

    prefix: str
    """What the counted message text holds before the shown text (`message_affixes`)."""
    suffix: str
    """What it holds after."""
    head: SplitCount
    """The whole text of an unclipped result; the head of a clipped one."""
    tail: SplitCount | None = None
    """The tail of a clipped result (None: unclipped)."""
    clip: ClipData | None = None
    """The clip (None: unclipped)."""
    left_out: int = 0
    """Characters the note says were left out."""

    def tokens(self, tokenizer: Tokenizer, seq: int) -> int:
        """Return the tokens of the shown message recorded at `seq` (its note names the seq)."""
        parts: list[str | SplitCount] = [self.prefix, self.head]
        if self.clip is not None:
            parts.append("\n" + clip_note(self.clip.omitted_tokens, self.left_out, seq))
            if self.tail is not None and self.clip.tail_chars:
                parts += ["\n", self.tail]
        parts.append(self.suffix)
        return MESSAGE_OVERHEAD + count_joined(tokenizer, parts)


def clip_tool_output(message: Message, tokenizer: Tokenizer, cap: int) -> Message:
    """Return `message` with a `ClipData` when it is a tool result over `cap` tokens.

    Messages that are not tool results, already carry a clip, or fit the cap come back as they
    are. The head and tail are cut at line ends where one is near, and shrink until together
    they take at most ``cap - NOTE_TOKENS`` tokens.
    """
    return clip_and_count(message, tokenizer, cap)[0]


def clip_and_count(
    message: Message, tokenizer: Tokenizer, cap: int
) -> tuple[Message, ShownCount | None]:
    """Return `clip_tool_output`'s message, and what it counted of it (None: nothing).

    The second item lets the usage view count the shown message without tokenizing the text
    again (`ShownCount.tokens`); it is None when the text was not tokenized (under the cap in
    bytes, not a tool result, already clipped).
    """
    if message.role != "tool" or message.clip is not None:
        return message, None
    text = message.text()
    if fits_unread(text, tokenizer, cap):
        return message, None
    counted = cut_counts(tokenizer, text)
    whole = split_count(tokenizer, text) if counted is None else counted.whole()
    total = count_joined(tokenizer, [whole]) if counted is None else counted.total
    prefix, suffix = message_affixes(message)
    if total <= cap:
        return message, ShownCount(prefix, suffix, whole)
    keep = max(0, cap - NOTE_TOKENS)
    per_token = len(text) / total
    head = _snap_head(text, int(keep * HEAD_SHARE * per_token))
    tail = _snap_tail(text, int((keep - int(keep * HEAD_SHARE)) * per_token))
    parts, kept = _parts(tokenizer, text, head, tail, counted)
    while head + tail and kept > keep:
        head, tail = head * 9 // 10, tail * 9 // 10
        parts, kept = _parts(tokenizer, text, head, tail, counted)
    clip = ClipData(head_chars=head, tail_chars=tail, omitted_tokens=max(0, total - kept))
    shown = ShownCount(prefix, suffix, parts[0], parts[1], clip, len(text) - head - tail)
    return message.model_copy(update={"clip": clip}), shown


def _parts(
    tokenizer: Tokenizer, text: str, head: int, tail: int, counted: CutCounts | None = None
) -> tuple[tuple[SplitCount, SplitCount], int]:
    """Count the head and tail of `text` in parts; return the parts and their tokens.

    With the text's `CutCounts`, only what lies past the last cut of the head (and before the
    first of the tail) is tokenized again.
    """
    if counted is not None:
        (h, head_tokens), (t, tail_tokens) = (
            counted.head(tokenizer, head),
            counted.tail(tokenizer, tail),
        )
        return (h, t), head_tokens + tail_tokens
    h = split_count(tokenizer, text[:head])
    t = split_count(tokenizer, text[len(text) - tail :])
    return (h, t), count_joined(tokenizer, [h]) + count_joined(tokenizer, [t])


def fits_unread(text: str, tokenizer: Tokenizer, cap: int) -> bool:
    """Tell, without tokenizing, that `text` takes at most `cap` tokens of `tokenizer`.

    True when the tokenizer is byte-level BPE without special tokens (tiktoken's
    ``encode_ordinary``: each token stands for at least one byte) and the text's UTF-8 length is
    at most `cap`; False means only that it has to be counted.
    """
    if not isinstance(tokenizer, TiktokenTokenizer):
        return False
    if len(text) * 4 <= cap:  # UTF-8 takes at most 4 bytes a character: no need to encode
        return True
    return len(text) <= cap and len(text.encode("utf-8", "surrogatepass")) <= cap


def _snap_head(text: str, chars: int) -> int:
    """End the head just after a line break in its last quarter, when there is one."""
    cut = text.rfind("\n", chars - chars // 4, chars)
    return cut + 1 if cut >= 0 else chars


def _snap_tail(text: str, chars: int) -> int:
    """Start the tail just after a line break in its first quarter, when there is one."""
    start = len(text) - chars
    cut = text.find("\n", start, start + chars // 4)
    return len(text) - cut - 1 if cut >= 0 else chars


def shown_message(message: Message, seq: int) -> Message:
    """Return the message as the model sees it: a clipped result as head, note and tail."""
    clip = message.clip
    if clip is None:
        return message
    text = message.text()
    left_out = len(text) - clip.head_chars - clip.tail_chars
    parts = [text[: clip.head_chars], clip_note(clip.omitted_tokens, left_out, seq)]
    if clip.tail_chars:
        parts.append(text[len(text) - clip.tail_chars :])
    return message.model_copy(update={"content": "\n".join(parts), "clip": None})


__all__ = [
    "ShownCount",
    "clip_and_count",
    "clip_note",
    "clip_tool_output",
    "shown_message",
]
