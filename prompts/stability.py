"""Prefix stability: how much of a prompt two modes (or two turns) share, in tokens.

A provider serves from its KV cache the longest token prefix a request shares with an earlier
one. `linearize` writes a mode's layers in the order a provider reads them, and
`shared_prefix_tokens` counts the tokens every given text starts with.

Invariants: measurements are pure functions of their inputs (the same texts and tokenizer give
the same counts).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Final, Literal

from compaction import Tokenizer
from prompts.builder import PromptLayers
from prompts.requests import dumps

TOKEN_BYTES: Final = 4
"""Bytes per token id in a packed token list (``array("I")`` on every CPython platform)."""

PrefixOrder = Literal["layout", "anthropic"]
"""``layout``: core, tools, mode, environment (the layout rule). ``anthropic``: tools first, as
the Anthropic API lays out its cache prefix (tools, then system)."""


def catalog_text(layers: PromptLayers) -> str:
    """Return the tool catalog as the canonical JSON a provider receives."""
    return dumps([t.openai() for t in layers.tools])


def linearize(layers: PromptLayers, *, order: PrefixOrder = "layout") -> str:
    """Return the prompt's layers (system prompt and tool catalog) as one text, in `order`."""
    catalog = catalog_text(layers)
    if order == "layout":
        parts = [layers.core, catalog, layers.mode, layers.environment]
    else:
        parts = [catalog, layers.core, layers.mode, layers.environment]
    return "\n\n".join(p for p in parts if p)


def common_prefix(a: bytes, b: bytes) -> int:
    """Return the length, in tokens, of the longest common prefix of two packed token lists.

    The one home of the common-prefix routine (the cache models of `harness.simulation` use it
    too). Each token is `TOKEN_BYTES` little-endian bytes (``array("I", ids).tobytes()``), so
    the comparison is a `memcmp`, halved by binary search, instead of a Python loop.
    """
    n = min(len(a), len(b)) // TOKEN_BYTES
    if a[: n * TOKEN_BYTES] == b[: n * TOKEN_BYTES]:
        return n
    lo, hi = 0, n  # prefix lo is equal, prefix hi is not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[: mid * TOKEN_BYTES] == b[: mid * TOKEN_BYTES]:
            lo = mid
        else:
            hi = mid
    return lo


def common_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    """Return how many leading token ids all `sequences` share (through `common_prefix`)."""
    if not sequences:
        return 0
    packed = [array("I", s).tobytes() for s in sequences]
    return min((common_prefix(packed[0], p) for p in packed[1:]), default=len(sequences[0]))


def shared_prefix_tokens(tokenizer: Tokenizer, texts: Sequence[str]) -> int:
    """Return the number of leading tokens all `texts` share."""
    return common_prefix_length([tokenizer.encode(t) for t in texts])
