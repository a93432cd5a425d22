"""The peers' results file, ``peers.json``: written with what it was measured with, and read back.

Invariants: the same records give the same bytes (sorted keys, UTF-8); an earlier file is only
merged when it was measured at the same budget.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RESULTS_FORMAT = "context-harness/peers"
RESULTS_VERSION = 1


def record_key(record: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """What identifies a peer record: (peer, variant, summarizer, session)."""
    return (
        record.get("peer"),
        record.get("variant"),
        record.get("summarizer"),
        record.get("session"),
    )


def kept_records(path: Path, budget: int, rerun: set[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Return the records of an earlier ``peers.json`` at `budget` that this run did not redo.

    `rerun` holds the `record_key`s just measured; every other record stays, the other
    variants, summarizers and sessions of a rerun peer included.
    """
    if not path.is_file():
        return []
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("budget") != budget:
        raise ValueError(f"{path} was measured at budget {doc.get('budget')}, not {budget}")
    return [r for r in doc.get("records") or () if record_key(r) not in rerun]


def write_results(records: Sequence[dict[str, Any]], path: Path, *, budget: int) -> Path:
    """Write the records with what they were measured with (sorted keys, UTF-8)."""
    doc = {
        "format": RESULTS_FORMAT,
        "version": RESULTS_VERSION,
        "tokenizer": "o200k_base",
        "serialization": "tools, then one JSON line per OpenAI chat message (metrics.serialize)",
        "budget": budget,
        "records": list(records),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n", "utf-8")
    return path
