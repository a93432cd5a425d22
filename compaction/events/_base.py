"""The base of every event model: frozen, no unknown field; and the schema version.

Invariants: every model of a log line is immutable once built and refuses a field it does not
declare, so a line either parses into exactly its fields or is refused.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from compaction.contract import SCHEMA_VERSION as SCHEMA_VERSION


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
