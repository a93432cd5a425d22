"""Named shapes of the generated sessions: how often the list is rewritten, how long work runs.

``stepwise`` is the generator's original shape (the list rewritten after every item, one action
per item), kept byte for byte; ``real`` is calibrated on the shared real transcripts
(``benchmarks/replay/transcript_stats.py`` measures them; ``benchmarks/README.md`` quotes the
figures): Claude Code rewrote its list 30 times in 329 model calls, with a median of 5 to 7.5 calls
and up to 34 between two writes.

Invariants: a profile is immutable; `PROFILES` maps each profile's own name to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class SessionProfile:
    """The shape of a generated session: how often the list is rewritten, how long work runs."""

    name: str
    """The profile's name, as `PROFILES` and ``--profile`` spell it."""
    description: str
    """One line saying what the shape is and where it comes from."""
    rewrite_chance: float = 1.0
    """Chance that the agent rewrites its list after finishing an item that is not the last
    (1.0: after every item, drawing no random number)."""
    extra_actions: tuple[int, int] = (0, 0)
    """Exploratory actions (reads, searches, commands) before each item's own action:
    a uniform count in this range (``(0, 0)``: none, drawing no random number)."""
    huge_output_chance: float = 0.0
    """Chance that an exploratory action is a very large file read (800-1,400 lines)."""


STEPWISE = SessionProfile(
    name="stepwise",
    description=(
        "the list rewritten after every item, one action per item: the latest list is "
        "always in the verbatim tail (the shape of the first benchmarks)"
    ),
)
REAL = SessionProfile(
    name="real",
    description=(
        "calibrated on the shared real transcripts: 2-5 actions per item, the list "
        "rewritten after a third of the items, about one tool output in twenty-five very large"
    ),
    rewrite_chance=0.3,
    extra_actions=(1, 4),
    huge_output_chance=0.04,
)
PROFILES: Mapping[str, SessionProfile] = {p.name: p for p in (STEPWISE, REAL)}
"""The named session shapes, by name."""
DEFAULT_PROFILE = STEPWISE.name
"""`generate`'s default: the original shape, which the benchmarks' committed figures use."""


def get_profile(profile: str | SessionProfile) -> SessionProfile:
    """Return the named profile (a `SessionProfile` is returned as it is).

    Raises:
        ValueError: no profile has that name (the message lists the names).
    """
    if isinstance(profile, SessionProfile):
        return profile
    found = PROFILES.get(profile)
    if found is None:
        raise ValueError(
            f"unknown session profile {profile!r}; choose one of {', '.join(PROFILES)}"
        )
    return found
