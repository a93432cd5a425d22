"""What every format's reader holds while it drives an `EventBuilder`.

Invariants: a record that is not a JSON object is counted (or, strict, raised), never read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compaction.importers._import_report import ImportReport
from compaction.importers._recorded_calls import unknown

if TYPE_CHECKING:
    from compaction.importers._base import EventBuilder


@dataclass
class RecordReader:
    """What every format's reader holds: the event builder, the report, the file, strictness."""

    builder: EventBuilder
    report: ImportReport
    path: Path
    strict: bool

    def as_object(self, lineno: int, value: object, what: str) -> Mapping[str, Any] | None:
        """Return `value` if it is a JSON object; otherwise report it as unreadable (None)."""
        if isinstance(value, Mapping):
            return value
        reason = f"a JSON {type(value).__name__} where a {what} (object) was expected"
        unknown(self.report, self.path, lineno, reason, strict=self.strict)
        return None
