"""Which sessions tune B and which judge it: the tuning split and the evaluation split.

B's defaults are chosen on the tuning sessions only, by the rule of
`benchmarks.quality.continuity_report` (`RULE`); the evaluation sessions are generated seeds that
rule never sees, and the shared real transcripts. Every benchmark record names its split
(``"split": "tuning"`` or ``"evaluation"``), and the report leads with the evaluation split.

Invariants: the two splits share no session; a session that is not a tuning session is an
evaluation session (the real transcripts, and any generated seed not listed in `TUNING`).
"""

from __future__ import annotations

import re
from typing import Final, Literal

Split = Literal["tuning", "evaluation"]

TUNING: Final[tuple[tuple[int, int], ...]] = ((12, 0), (12, 1), (24, 2))
"""(turns, seed) of the generated sessions B's defaults are chosen on (the first benchmark's)."""
EVALUATION: Final[tuple[tuple[int, int], ...]] = ((12, 3), (12, 4), (12, 5), (24, 6), (24, 7))
"""(turns, seed) of the generated sessions no default was ever chosen on."""
SPLITS: Final[tuple[Split, ...]] = ("evaluation", "tuning")
"""The splits in report order: the evaluation split first."""

_GENERATED = re.compile(r"^synthetic-(?:[a-z]+-)?t(\d+)-s(\d+)$")


def split_of(session: str) -> Split:
    """Return the split of a session by its name (``synthetic-t12-s0``, ``real-...``).

    A generated session is a tuning session when its (turns, seed) is in `TUNING`, whatever its
    shape (``synthetic-real-t12-s0`` too); everything else is an evaluation session.
    """
    found = _GENERATED.match(session)
    if found and (int(found.group(1)), int(found.group(2))) in TUNING:
        return "tuning"
    return "evaluation"


def generated_name(turns: int, seed: int) -> str:
    """Return the name of the generated session of `turns` turns and `seed`."""
    return f"synthetic-t{turns}-s{seed}"


__all__ = ["EVALUATION", "SPLITS", "TUNING", "Split", "generated_name", "split_of"]
