"""The canonical serialization of a request, and where Anthropic's breakpoints fall in it.

The same for every strategy and peer, so token counts compare (the peers' scorer,
`benchmarks.peers.metrics.serialize`, writes the same bytes): a request is the tool catalog as
one compact JSON array with sorted keys, then one compact sorted-key JSON line per message (the
system message first), each line ending in a newline. Lines are tokenized one by one with the
session's tokenizer (``o200k_base`` by default) and concatenated; since every line ends in ``}``
and a newline, this gives the same tokens as encoding the whole text, and each distinct line is
encoded once (`SegmentTokens`).

Tools come first, then the system prompt, then the messages: the order in which Anthropic reads
a request for its cache (tools, system, messages). `anthropic_offsets` maps the breakpoints of
the Anthropic request the builder produces for the same call to token offsets in these lines: a
breakpoint on a system block ends at the system line, one on a message at the line of the last
message merged into it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compaction import Tokenizer
from harness.simulation._cache_models import pack
from prompts import CacheBreakpoint, dumps


def _line(value: object) -> str:
    return dumps(value) + "\n"


def serialize(request: Mapping[str, Any]) -> list[str]:
    """Return the canonical lines of an OpenAI-format request: tools, then each message."""
    return [_line(list(request.get("tools") or ())), *map(_line, request["messages"])]


class SegmentTokens:
    """Token ids of segments, packed, computed once per distinct segment text."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self._cache: dict[str, bytes] = {}

    def __call__(self, text: str) -> bytes:
        """Return the packed token ids of `text`."""
        got = self._cache.get(text)
        if got is None:
            got = self._cache[text] = pack(self.tokenizer.encode(text))
        return got


def anthropic_offsets(
    breakpoints: Sequence[CacheBreakpoint],
    sources: Sequence[int],
    line_tokens: Sequence[int],
    *,
    system_lines: int,
) -> list[int]:
    """Map an Anthropic request's breakpoints to token offsets in the canonical serialization.

    The serialization's lines are the tools, `system_lines` system lines (the built prompt, then
    the log's system messages), then one line per conversation message. A breakpoint on a tool
    ends at the tools line; one on a system block at the end of the system lines (a block cannot
    be placed inside a line); one on Anthropic message ``k`` at the line of the last message
    merged into it (``sources[k]``, from `prompts.anthropic_message_sources`).
    """
    ends: list[int] = []
    total = 0
    for n in line_tokens:
        total += n
        ends.append(total)
    offsets: set[int] = set()
    for mark in breakpoints:
        if mark.section == "tools":
            offsets.add(ends[0])
        elif mark.section == "system":
            offsets.add(ends[system_lines])
        else:
            offsets.add(ends[1 + system_lines + sources[mark.index]])
    return sorted(offsets)
