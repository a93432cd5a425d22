"""What ``harness log`` says about compactions and turn ends: receipts and open work.

``harness log LOG --seq N`` on a ``compaction/checkpoint`` event prints its receipt (the span,
the tokens, the resume decision, each hook that ran, what each narrative section left out, with
the seqs to read back) and then the Checkpoint text; ``harness log LOG`` lists the turns that
ended with open work (`OpenWork` in their ``turn/end``).

Invariants: free text from the log (hook names, dropped items) is quoted as one-line JSON, so
no recorded string can forge a line of the report.
"""

from __future__ import annotations

import json
from typing import Final

from compaction import CheckpointRecorded, OpenWork

MAX_OPEN_TURNS: Final = 10
"""Most turns with open work the text report lists (the JSON lists them all)."""


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def receipt_lines(event: CheckpointRecorded) -> list[str]:
    """Return the receipt of a compaction, one line each, then a blank line."""
    d = event.data
    lines = [
        f"compaction/checkpoint at seq {event.seq}: replaced events {d.first_seq}..{d.last_seq} "
        f"({d.tokens_before} -> {d.tokens_after} context tokens), summarizer {_q(d.summarizer)}, "
        f"resume {d.resume or 'not recorded'}"
    ]
    if d.hooks:
        for hook in d.hooks:
            added = f", added {_q(hook.added)}" if hook.added else ", added nothing"
            lines.append(f"hook {_q(hook.name)}: {'vetoed' if hook.vetoed else 'ran'}{added}")
    else:
        lines.append("hooks: none ran")
    if d.narrative_left_out:
        lines.append(f"narrative left empty: {d.narrative_left_out}")
    if not d.dropped:
        lines.append("dropped: nothing")
    for section in d.dropped or ():
        lines.append(f"dropped from {section.section}:")
        for item in section.items:
            seqs = ", ".join(str(s) for s in item.seqs) or "none found"
            lines.append(f"  - {_q(item.text)} (seqs {seqs})")
        if section.more:
            lines.append(f"  ... and {section.more} more")
    return [*lines, ""]


def open_work_text(work: OpenWork) -> str:
    """Return open work as a short phrase: counts, then the task ids."""
    parts = []
    if work.todos_pending or work.todos_in_progress:
        parts.append(f"todos {work.todos_in_progress} in progress, {work.todos_pending} pending")
    if work.tasks_pending or work.tasks_in_progress:
        ids = ", ".join(work.task_ids)
        parts.append(
            f"tasks {work.tasks_in_progress} in progress, {work.tasks_pending} pending (ids {ids})"
        )
    return "; ".join(parts)
