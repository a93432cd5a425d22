"""The block machinery the prefix-cache models share: packed token ids, chained block digests.

Token ids are given as a sequence of ints, or packed (`pack`: 4 bytes per token, little-endian)
so long sessions compare prefixes with `memcmp` instead of Python loops. Block hashes are
BLAKE2b digests chained from block to block (`digest`), so results never depend on Python's hash
seed. `BlockSimulator` holds the blocks seen, with the time each was last used: a request hits
on its whole leading blocks already seen and still alive; each provider shapes that number by
its own rule.

Invariants: the digest of block i covers blocks 0..i; a block is never older than a block after
it in the same chain; the same requests give the same digests and the same matches.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

from prompts import TOKEN_BYTES, common_prefix

TokenIds = Sequence[int] | bytes
"""Token ids of one request: ints, or bytes made by `pack`."""

ROOT_DIGEST = b"\0" * 8
"""The parent digest of a chain's first block."""
NEVER = float("-inf")
"""The last-use time of a block seen without a clock: alive forever."""


def pack(tokens: Sequence[int]) -> bytes:
    """Pack token ids into 4-byte little-endian words (the form the models compare)."""
    arr = array("I", tokens)
    if arr.itemsize != TOKEN_BYTES:  # pragma: no cover - every CPython platform has a 4-byte "I"
        raise RuntimeError("array('I') is not 4 bytes wide on this platform")
    return arr.tobytes()


def packed(tokens: TokenIds) -> bytes:
    """Return token ids packed (`pack`), as they are when already bytes."""
    return tokens if isinstance(tokens, bytes) else pack(tokens)


def digest(parent: bytes, chunk: bytes) -> bytes:
    """Return the 8-byte BLAKE2b digest of `chunk` keyed by its parent block's digest."""
    return hashlib.blake2b(chunk, digest_size=8, key=parent).digest()


@dataclass
class _Chain:
    """Chained digests of a request's full blocks, reusing the previous request's chain."""

    block: int
    data: bytes = b""
    digests: list[bytes] = field(default_factory=list)

    def advance(self, data: bytes) -> list[bytes]:
        """Return the digests of `data`'s full blocks (digest i covers blocks 0..i)."""
        size = self.block * TOKEN_BYTES
        keep = min(common_prefix(self.data, data) // self.block, len(self.digests))
        digests = self.digests[:keep]
        parent = digests[-1] if digests else ROOT_DIGEST
        for start in range(keep * size, len(data) - size + 1, size):
            parent = digest(parent, data[start : start + size])
            digests.append(parent)
        self.data, self.digests = data, digests
        return digests


def _leading_in(digests: Sequence[bytes], seen: dict[bytes, float], since: float) -> int:
    """Count the leading digests last used at `since` or later (prefix-closed: binary search).

    A request touches every one of its digests, so a block is never older than a block after
    it in the same chain.
    """
    lo, hi = 0, len(digests)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        used = seen.get(digests[mid - 1])
        if used is not None and used >= since:
            lo = mid
        else:
            hi = mid - 1
    return lo


class BlockSimulator:
    """Hits are whole leading blocks already seen and still alive, shaped by a provider rule."""

    def __init__(self, block: int, ttl: float | None = None) -> None:
        self.chain = _Chain(block)
        self.ttl = ttl
        self.seen: dict[bytes, float] = {}
        """Each block digest seen, with the time it was last used (-inf without a clock)."""

    def since(self, at: float | None) -> float:
        """Return the oldest last-use time still alive at `at` (-inf: everything is)."""
        if at is None or self.ttl is None:
            return NEVER
        return at - self.ttl

    def matched_blocks(self, data: bytes, at: float | None = None) -> tuple[int, int]:
        """Return (leading blocks seen and alive, full blocks); remember this request's."""
        digests = self.chain.advance(data)
        matched = _leading_in(digests, self.seen, self.since(at))
        if at is None:
            self.seen.update(dict.fromkeys(digests[matched:], NEVER))
        else:  # every block the request holds is used now: refresh them all
            self.seen.update(dict.fromkeys(digests, at))
        return matched, len(digests)


def check_positive(name: str, value: int) -> None:
    """Refuse a model parameter that is not a positive number of tokens."""
    if value < 1:
        raise ValueError(f"{name} must be a positive number of tokens, not {value}")


def check_lifetime(value: float | None) -> None:
    """Refuse a lifetime that is neither None nor a positive number of seconds."""
    if value is not None and not value > 0:
        raise ValueError(f"ttl_seconds must be a positive number of seconds or None, not {value}")
