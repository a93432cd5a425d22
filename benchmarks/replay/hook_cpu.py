"""What one hook run costs the agent: whole-process CPU of ``harness hooks run``, per child.

A 10 MB Claude Code transcript is built from a shared real one (its records repeated, then one
of Claude Code's compactions), and ``harness hooks run claude-code`` is fed the SessionStart
(source ``compact``) input: once with an empty cache (the whole file read), once after one more
record was appended (only that record read). Gemini CLI's BeforeModel input without a
compression (the common case: every model call) is measured too, beside ``python -c pass``.

Invariants: CPU is the children's user + system time (``RUSAGE_CHILDREN``), the median of
`REPEATS` runs; each cold run starts with an empty hooks folder.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPEATS = 3
SOURCE = "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"
"""A real session that ends with two open todos, so the hook prints its block."""


def child_cpu(argv: Sequence[str], stdin: bytes, env: dict[str, str]) -> tuple[float, bytes]:
    """Run `argv` once; return its CPU seconds (user + system) and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        list(argv), input=stdin, capture_output=True, env=env, check=True, timeout=120
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout


def big_transcript(source: Path, target: Path, size: int) -> Path:
    """Write a transcript of at least `size` bytes: `source` repeated, then a compaction."""
    body = source.read_bytes()
    with target.open("wb") as fh:
        written = 0
        while written < size:
            fh.write(body if body.endswith(b"\n") else body + b"\n")
            written += len(body)
        for record in (
            {"type": "system", "subtype": "compact_boundary", "sessionId": "s"},
            {"type": "user", "isCompactSummary": True, "sessionId": "s",
             "message": {"role": "user", "content": "Summary: work goes on."}},
        ):  # fmt: skip
            fh.write(json.dumps(record).encode() + b"\n")
    return target


def measure(harness: Sequence[str], transcripts: Path, env: dict[str, str]) -> dict[str, Any]:
    """Return the hook's CPU on a 10 MB transcript (cold, incremental) and Gemini's fast path."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = big_transcript(transcripts / SOURCE, folder / "big.jsonl", 10 * 1024 * 1024)
        data = {"hook_event_name": "SessionStart", "source": "compact", "session_id": "s"}
        stdin = json.dumps(data | {"transcript_path": str(path)}).encode()
        run = [*harness, "hooks", "run", "claude-code"]
        cold, warm, out = [], [], b""
        for n in range(REPEATS):
            hooks = {**env, "HARNESS_HOOKS_DIR": str(folder / f"hooks{n}")}
            cpu, out = child_cpu(run, stdin, hooks)
            cold.append(cpu)
            with path.open("ab") as fh:
                fh.write(
                    json.dumps({"type": "progress", "sessionId": "s", "n": n}).encode() + b"\n"
                )
            warm.append(child_cpu(run, stdin, hooks)[0])
        plain = [child_cpu([sys.executable, "-c", "pass"], b"", env)[0] for _ in range(REPEATS)]
        gemini = json.dumps({"hook_event_name": "BeforeModel", "llm_request": {"messages": []}})
        fast = [
            child_cpu([*harness, "hooks", "run", "gemini"], gemini.encode(), env)[0]
            for _ in range(REPEATS)
        ]
        return {
            "transcript_bytes": path.stat().st_size,
            "cold_cpu_s": round(statistics.median(cold), 3),
            "incremental_cpu_s": round(statistics.median(warm), 3),
            "gemini_no_compression_cpu_s": round(statistics.median(fast), 3),
            "python_pass_cpu_s": round(statistics.median(plain), 3),
            "printed_restore_block": bool(out.strip()),
        }
