"""The base of every event model: frozen, no unknown field; and the schema version.

Invariants: every model of a log line is immutable once built and refuses a field it does not
declare, so a line either parses into exactly its fields or is refused; every integer it holds
is within `MAX_INT` (a figure of thousands of digits is refused when written, so every later
open of the log can read it).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from compaction.contract import MAX_INT as MAX_INT
from compaction.contract import SCHEMA_VERSION as SCHEMA_VERSION
from compaction.contract import lone_surrogate as lone_surrogate


def surrogate_problem(what: str, text: str) -> str | None:
    """Return ``WHAT must be valid Unicode text (...)`` when `text` holds a lone surrogate."""
    at = lone_surrogate(text)
    if at is None:
        return None
    return (
        f"{what} must be valid Unicode text: it holds a lone surrogate "
        f"(U+{ord(text[at]):04X} at character {at})"
    )


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
