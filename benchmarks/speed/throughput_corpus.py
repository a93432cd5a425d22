"""The throughput benchmark's events: real transcripts' messages and a generated session, unique.

`events_of(n)` returns `n` event payloads: the messages of the shared real transcripts
(``../shared/transcripts``, when present) followed by a generated 40-turn session (user
requests, tool calls with large outputs, todo writes), cycled until there are `n` of them. Every
message of the k-th copy (k >= 1) gets the prefix ``[k]`` and the copy leaves the system
messages out: one session has one system prompt (cycled ones would add up to more than the
window at 10^6 events, and compaction never replaces them).

Invariants: no message text of one copy of the corpus is the text of a message in another copy
(so no token count is a memo hit of an earlier copy; a text repeated within one session, "Done.",
stays repeated: that is the real mix); the first `n` events of a larger size are the events of
size `n`.
"""

from __future__ import annotations

import itertools
from functools import cache
from pathlib import Path

from benchmarks import CHECKOUT
from compaction import EventData, Message
from compaction.importers import load
from harness.simulation import generate

ROOT = CHECKOUT
"""The checkout (or worktree) this benchmark runs from."""
TRANSCRIPTS = next(
    (
        d
        for d in (
            ROOT.parent / "shared" / "transcripts",
            ROOT.parents[1] / "shared" / "transcripts",
        )
        if d.is_dir()
    ),
    ROOT.parent / "shared" / "transcripts",
)
"""``../shared/transcripts`` of the checkout (or of the folder above, for a worktree)."""


def _unique(payload: EventData, copy: int) -> EventData:
    """Return the payload of the `copy`-th cycle: a message's text gets a ``[copy]`` prefix."""
    if copy == 0 or not isinstance(payload, Message):
        return payload
    return payload.model_copy(update={"content": f"[{copy}] {payload.text()}"})


@cache
def _corpus(seed: int, transcripts: Path | None) -> tuple[EventData, ...]:
    """One cycle: the transcripts' messages (by file name), then a generated session."""
    real: list[EventData] = []
    if transcripts is not None and transcripts.is_dir():
        for path in sorted(transcripts.iterdir()):
            if path.suffix not in (".jsonl", ".json", ".traj"):
                continue
            real += [e.data for e in load(path) if isinstance(e.data, Message)]
    return (*real, *generate(40, seed))


def _is_system(payload: EventData) -> bool:
    return isinstance(payload, Message) and payload.role == "system"


def events_of(n: int, seed: int = 0, transcripts: Path | None = TRANSCRIPTS) -> list[EventData]:
    """Return `n` event payloads, every message text unique (see the module docstring).

    The first copy is the whole corpus; later copies leave its system messages out, so the
    events of any size are one session with one system prompt, not a pile of sessions whose
    system prompts (which compaction never replaces) grow with N.
    """
    corpus = _corpus(seed, transcripts)
    rest = [p for p in corpus if not _is_system(p)] or list(corpus)
    out = list(corpus[:n])
    for copy in itertools.count(1):
        if len(out) >= n:
            break
        out += [_unique(p, copy) for p in rest[: n - len(out)]]
    return out
