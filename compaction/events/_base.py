"""The base of every event model: frozen, no unknown field; and the schema version.

Invariants: every model of a log line is immutable once built and refuses a field it does not
declare, so a line either parses into exactly its fields or is refused; every integer it holds
is within `MAX_INT` (a figure of thousands of digits is refused when written, so every later
open of the log can read it).
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict

MAX_INT: Final = 2**53 - 1
"""The largest integer an event holds: JSON's safe integer, which every reader keeps exactly."""

SCHEMA_VERSION = 1
"""Version written into every new event (`v`)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
