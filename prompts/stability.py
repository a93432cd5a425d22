"""Prefix stability: how much of a prompt two modes (or two turns) share, in tokens.

A provider serves from its KV cache the longest token prefix a request shares with an earlier
one. `linearize` writes a mode's layers in the order a provider reads them, and
`shared_prefix_tokens` counts the tokens every given text starts with.

Invariants: measurements are pure functions of their inputs (the same texts and tokenizer give
the same counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from compaction import Tokenizer
from prompts.builder import PromptLayers
from prompts.requests import dumps

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


def common_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    """Return how many leading items all `sequences` share."""
    if not sequences:
        return 0
    n = 0
    for items in zip(*sequences, strict=False):
        if any(x != items[0] for x in items[1:]):
            break
        n += 1
    return n


def shared_prefix_tokens(tokenizer: Tokenizer, texts: Sequence[str]) -> int:
    """Return the number of leading tokens all `texts` share."""
    return common_prefix_length([tokenizer.encode(t) for t in texts])
