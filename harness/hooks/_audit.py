"""`harness hooks audit TRANSCRIPT`: what each of an agent's own compactions kept of the open items.

For any recorded session of Claude Code, Codex CLI or Gemini CLI: each compaction the agent
made, the items open at that point, and which of them its summary kept (verbatim, or a task by
its id). The transcript is read whole through `compaction.importers` (its format detected, or
named).

Invariants: the figures are computed from the transcript alone; the same file gives the same
report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compaction.importers import detect_format, load
from harness.hooks._fold import Fold, fold
from harness.hooks._transcript import ByteEstimate


def audit(path: Path, format: str = "auto") -> Fold:
    """Fold the transcript at `path` whole: its compactions and what each kept."""
    name = detect_format(path) if format == "auto" else format
    return fold(load(path, name, tokenizer=ByteEstimate()))


def audit_json(path: Path, folded: Fold) -> dict[str, Any]:
    """Return the audit as plain JSON data."""
    compactions = []
    for compaction in folded.compactions:
        kept = compaction.kept()
        compactions.append(
            {
                "number": compaction.number,
                "open": len(kept),
                "kept": sum(1 for _, how in kept if how is not None),
                "items": [
                    {"item": item.line(), "kept": how is not None, "how": how} for item, how in kept
                ],
            }
        )
    return {
        "transcript": str(path),
        "compactions": compactions,
        "open_items": sum(c["open"] for c in compactions),
        "kept_items": sum(c["kept"] for c in compactions),
    }


def audit_text(data: dict[str, Any]) -> str:
    """Return the audit as lines a person reads."""
    lines = [f"{data['transcript']}: {len(data['compactions'])} compactions by the agent"]
    for compaction in data["compactions"]:
        lines.append(
            f"compaction {compaction['number']}: the summary kept "
            f"{compaction['kept']} of {compaction['open']} open items"
        )
        for entry in compaction["items"]:
            mark = f"kept ({entry['how']})" if entry["kept"] else "DROPPED"
            lines.append(f"  {mark:<15} {_first_line(entry['item'])}")
    lines.append(f"total: kept {data['kept_items']} of {data['open_items']} open items")
    return "\n".join(lines)


def _first_line(item: str) -> str:
    """Return an item's first line, and how many more it has (a plan runs to many)."""
    first, _, rest = item.partition("\n")
    more = rest.count("\n") + 1 if rest else 0
    return f"{first} (+{more} more lines; --json has them whole)" if more else first
