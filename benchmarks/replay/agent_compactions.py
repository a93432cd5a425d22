"""The agents' own compactions with and without the hooks, with the real CLIs, offline.

Per scenario (`benchmarks.replay.agent_scenarios`: Claude Code's todos and shared tasks, manual
and automatic; Codex's plan; Gemini CLI's todos) and per shared real Claude Code transcript cut
where the most items are open: the open items the first request after the agent's compaction
holds verbatim with ``harness hooks install AGENT`` and without, the hook's CPU time (its
receipts) and the tokens it adds (o200k_base, the block it printed). Then the hook's whole-process
CPU on a 10 MB transcript, read cold and again after one appended record, beside
``python -c pass``.

Run: ``python -m benchmarks.replay.agent_compactions`` (the CLIs from ``scripts/install-agents``;
without them only the CPU part runs). Results: ``benchmarks/results/agent_compactions.json``.

Invariants: the same CLIs and scripts give the same item counts; CPU is measured per child
process (``RUSAGE_CHILDREN``), never wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import RESULTS, SHARED_TRANSCRIPTS
from benchmarks.replay import hook_cpu
from benchmarks.replay.agent_scenarios import SUMMARY, Scenario, plant, real_cut, scenarios
from compaction import get_tokenizer
from harness.hooks import receipts
from harness.testing import (
    RecordedRequest,
    Reply,
    StubModel,
    agent_binary,
    api_of,
    is_summary_request,
    items_held,
    make_agent_run,
    summary_rule,
)

OUT = RESULTS / "agent_compactions.json"
TEN_MB = 10 * 1024 * 1024


def first_after(requests: Sequence[RecordedRequest]) -> RecordedRequest | None:
    """Return the first model request after the last summary request, or None."""
    decoded = [(r, str(api_of(r.path)), r.json()) for r in requests]
    marks = [i for i, (_, api, body) in enumerate(decoded) if is_summary_request(api, body)]
    if not marks:
        return None
    later = [r for r, api, body in decoded[marks[-1] + 1 :] if not is_summary_request(api, body)]
    return later[0] if later else None


def _one(scenario: Scenario, hooks: bool, folder: Path) -> dict[str, Any]:
    with StubModel(scenario.script, rules=[summary_rule(scenario.summary)]) as stub:
        run = make_agent_run(folder, scenario.agent, stub)
        if hooks:
            scope = (
                ["--project", str(run.project)] if scenario.agent == "claude-code" else ["--user"]
            )
            run.harness("hooks", "install", scenario.agent, *scope)
        scenario.drive(run)
    return _measured(stub.requests, scenario.items, folder / "hooks")


def _measured(
    requests: Sequence[RecordedRequest], items: Sequence[str], hooks_dir: Path
) -> dict[str, Any]:
    """Return what the first request after the compaction held, and what the hook cost."""
    first = first_after(requests)
    rows = list(receipts(hooks_dir))
    tokenizer = get_tokenizer()
    return {
        "open": len(items),
        "held": None if first is None else items_held(first.body, items),
        "hook_runs": len(rows),
        "hook_cpu_s": round(sum(r.get("cpu_s", 0.0) for r in rows), 4),
        "added_tokens": sum(tokenizer.count(r.get("printed", "")) for r in rows),
    }


def scenario_rows(only: str | None) -> list[dict[str, Any]]:
    """Run every scenario with and without the hooks."""
    rows = []
    for scenario in scenarios():
        if agent_binary(scenario.agent) is None or (only and only not in scenario.name):
            continue
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            with_hooks = _one(scenario, True, Path(a))
            without = _one(scenario, False, Path(b))
        rows.append(
            {"name": scenario.name, "agent": scenario.agent, "with": with_hooks, "without": without}
        )
        print(
            f"{scenario.name}: with {with_hooks['held']}/{with_hooks['open']}, "
            f"without {without['held']}/{without['open']}",
            file=sys.stderr,
        )
    return rows


def real_rows(folder: Path, only: str | None) -> list[dict[str, Any]]:
    """Resume each shared Claude Code transcript at its cut, ``/compact`` it, with and without."""
    if agent_binary("claude-code") is None or not folder.is_dir():
        return []
    rows = []
    for source in sorted(folder.glob("claude-code*.jsonl")):
        lines, items = real_cut(source)
        if not items or (only and only not in source.name):
            continue
        row: dict[str, Any] = {"name": source.name, "agent": "claude-code", "cut_lines": len(lines)}
        for key, hooks in (("with", True), ("without", False)):
            with (
                tempfile.TemporaryDirectory() as tmp,
                StubModel([Reply("Continuing.")], rules=[summary_rule(SUMMARY)]) as stub,
            ):
                run = make_agent_run(Path(tmp), "claude-code", stub)
                if hooks:
                    run.harness("hooks", "install", "claude-code", "--project", str(run.project))
                session = plant(run, lines)
                run.cli(["-p", "/compact", "--resume", session, "--output-format", "json"])
                run.cli(["-p", "Go on.", "--resume", session])
                row[key] = _measured(stub.requests, items, Path(tmp) / "hooks")
        print(
            f"{source.name}: with {row['with']['held']}/{len(items)}, "
            f"without {row['without']['held']}/{len(items)}",
            file=sys.stderr,
        )
        rows.append(row)
    return rows


def totals(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Return, per agent, the open items and those held with and without the hooks."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        entry = out.setdefault(row["agent"], {"open": 0, "with": 0, "without": 0, "runs": 0})
        entry["open"] += row["with"]["open"]
        entry["with"] += row["with"]["held"] or 0
        entry["without"] += row["without"]["held"] or 0
        entry["runs"] += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and write `OUT`; return 0."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.replay.agent_compactions")
    parser.add_argument("--only", help="run the scenarios and transcripts whose name holds this")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--transcripts", type=Path, default=SHARED_TRANSCRIPTS)
    args = parser.parse_args(argv)
    rows = scenario_rows(args.only) + real_rows(args.transcripts, args.only)
    harness = [str(Path(sys.executable).parent / "harness")]
    cpu = hook_cpu.measure(harness, args.transcripts, {"PATH": "/usr/bin:/bin", "HOME": "/tmp"})
    missing = [a for a in ("claude-code", "codex", "gemini") if agent_binary(a) is None]
    results = {"rows": rows, "totals": totals(rows), "hook_cpu": cpu, "agents_missing": missing}
    args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps({"totals": results["totals"], "hook_cpu": cpu}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
