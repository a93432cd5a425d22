"""The shared real transcripts replayed request by request under every strategy, priced.

Each transcript of ``../shared/transcripts`` that `REAL_SESSIONS` names is imported
(`compaction.importers.load`; its own recorded compactions dropped, `log_payloads`) and replayed
by `harness.simulation.replay` under every strategy and content-blind run, at the same matched
whole-request budget as the generated sessions (the run's compaction policy). Per run: model
calls, compactions, summed input tokens, cost under each provider's prices and cache model,
every-call retention of unfinished todos (calls whose request shows every unfinished item of
the latest list) and the unfinished items kept at compactions. Session names say where each
came from (agent, version, tool family, source file). Run it alone as
``python -m benchmarks.real_replay --out FILE.json``; the full ``harness bench`` run includes it.

Every-call retention is counted for the todo list and for the shared task list (TaskCreate /
TaskUpdate: each unfinished task's id at its latest status). The peers (`benchmarks/peers`) do
not replay these sessions yet; the report says so.

Invariants: a run is a pure function of the transcript bytes, the strategy and the policy; a
missing folder or file gives a row with a reason, never an error.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compaction import CompactionPolicy, get_tokenizer
from compaction.events import TaskCreateData, TaskUpdateData
from compaction.importers import load
from harness.simulation import (
    BLIND_RUNS,
    STRATEGIES,
    blind_summarizer,
    default_prices,
    log_payloads,
    output_tokens,
    replay,
    session_cost,
)

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
"""The shared real transcripts (``../shared/transcripts``)."""

REAL_SESSIONS: Mapping[str, str] = {
    "real-claude-code-2.1.7-todowrite-cd95": (
        "claude-code_entire-cli_cd95adddad32_3compactions.jsonl"
    ),
    "real-claude-code-2.0.76-todowrite-f839": (
        "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"
    ),
    "real-claude-code-2.1.39-taskcreate-64df": (
        "claude-code-2.1_entire-cli_64-df6ebeea39_taskcreate-taskupdate.jsonl"
    ),
    "real-claude-code-2.1.37-tasks-7be2": (
        "claude-code-2.1_entire-cli_7b-e20d70c73b_injected-text_compaction.jsonl"
    ),
    "real-claude-code-2.1.39-subagents-fa81": (
        "claude-code-2.1_spotter_fa812bfe_task-tools_2compactions.jsonl"
    ),
    "real-gemini-cli-ab2b": "gemini-cli_entire-cli_ab-2b9748b105.json",
    "real-swe-agent-gpt4-pydicom-1458": "swe-agent_gpt4_pydicom-1458.traj",
}
"""Session name -> transcript file. No Codex transcript is shared yet, so none is replayed."""

QUICK_SESSIONS: tuple[str, ...] = ("real-swe-agent-gpt4-pydicom-1458",)
"""The one short transcript a quick run replays."""

Progress = Callable[[str], None]


def run_names() -> list[str]:
    """Return every run: the strategies, then the content-blind runs."""
    return [*STRATEGIES, *(run for run, _ in BLIND_RUNS)]


def replay_session(
    name: str, path: Path, policy: CompactionPolicy, runs: Sequence[str]
) -> list[dict[str, Any]]:
    """Replay one transcript under each of `runs`; return one record per run."""
    tok = get_tokenizer()
    payloads = log_payloads(load(path))
    tasks = sum(isinstance(p, TaskCreateData | TaskUpdateData) for p in payloads)
    out_tokens = output_tokens(payloads, tok)
    prices = default_prices().providers
    blind = dict(BLIND_RUNS)
    records = []
    for run in runs:
        result = replay(
            payloads,
            STRATEGIES[blind.get(run, run)],
            policy=policy,
            tokenizer=tok,
            session_name=name,
            summarizer=blind_summarizer if run in blind else None,
        )
        prompts = [r.prompt_tokens for r in result.records]
        cost = {
            provider: session_cost(
                price, prompts, [r.hits[price.cache_model] for r in result.records], out_tokens
            ).as_dict()
            for provider, price in prices.items()
        }
        records.append(
            {
                "session": name,
                "source": path.name,
                "strategy": run,
                "requests": len(result.records),
                "compactions": result.compactions,
                "summed_input_tokens": sum(prompts),
                "peak_input_tokens": max(prompts, default=0),
                "output_tokens": out_tokens,
                "cost": cost,
                "todo_checks": result.todo_checks,
                "every_call": round(result.request_retention, 6),
                "kept": result.kept,
                "expected": result.expected,
                "task_events": tasks,
                "task_checks": result.task_checks,
                "task_every_call": round(result.task_retention, 6),
            }
        )
    return records


def run(
    *,
    window: int,
    folder: Path = TRANSCRIPTS,
    sessions: Sequence[str] | None = None,
    runs: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Replay the named real sessions (default: all) under every run; return plain data."""
    say = progress or (lambda _line: None)
    policy = CompactionPolicy(window_tokens=window)
    chosen = list(sessions) if sessions is not None else list(REAL_SESSIONS)
    records: list[dict[str, Any]] = []
    missing: dict[str, str] = {}
    for name in chosen:
        path = folder / REAL_SESSIONS[name]
        if not path.is_file():
            missing[name] = f"{path} not found"
            continue
        for rec in replay_session(name, path, policy, runs or run_names()):
            records.append(rec)
            say(
                f"{name} {rec['strategy']}: {rec['requests']} calls, {rec['compactions']} "
                f"compactions, {rec['summed_input_tokens']:,} input tokens"
            )
    return {
        "folder": folder.name,
        "window": window,
        "budget": policy.trigger_tokens,
        "records": records,
        "missing": missing,
    }


def markdown(results: Mapping[str, Any]) -> list[str]:
    """Return the report's section: one row per (session, run)."""
    lines = [
        "## Real transcripts under every strategy",
        "",
        f"The shared real transcripts (`../shared/transcripts`), replayed request by request at "
        f"the matched whole-request budget of {results['budget']:,} tokens "
        "(`benchmarks/real_replay.py`). *Every call (todos)*: share of calls, made while the "
        "latest todo list had unfinished items, whose request shows every one of them at its "
        "latest status; *every call (tasks)*: the same for the shared task list's unfinished "
        "tasks (id and status). The peers do not replay these sessions yet.",
        "",
    ]
    if not results["records"]:
        reasons = "; ".join(results["missing"].values()) or "no session chosen"
        return [*lines, f"Skipped: {reasons}.", ""]
    providers = list(results["records"][0]["cost"])
    head = (
        "| session | run | calls | compactions | summed input | "
        + " | ".join(f"{p} USD" for p in providers)
        + " | every call (todos) | kept at compactions | task events | every call (tasks) |"
    )
    lines += [head, "|" + "---|" * 2 + "---:|" * (8 + len(providers) - 1)]
    for r in results["records"]:
        every = f"{r['every_call']:.1%}" if r["todo_checks"] else "no open todo"
        tasks = f"{r['task_every_call']:.1%}" if r["task_checks"] else "no open task"
        lines.append(
            f"| `{r['session']}` | {r['strategy']} | {r['requests']} | {r['compactions']} | "
            f"{r['summed_input_tokens']:,} | "
            + " | ".join(f"{r['cost'][p]['usd']:.3f}" for p in providers)
            + f" | {every} | {r['kept']}/{r['expected']} | {r['task_events']} | {tasks} |"
        )
    for name, why in results["missing"].items():
        lines.append(f"\n`{name}` skipped: {why}.")
    return [*lines, ""]


def main(argv: Sequence[str] | None = None) -> int:
    """Replay the real sessions and write the JSON (and print the table)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="results JSON path")
    parser.add_argument("--folder", type=Path, default=TRANSCRIPTS)
    parser.add_argument("--window", type=int, default=30_000)
    parser.add_argument("--sessions", nargs="+", choices=list(REAL_SESSIONS), default=None)
    parser.add_argument("--runs", nargs="+", choices=run_names(), default=None)
    args = parser.parse_args(argv)
    results = run(
        window=args.window,
        folder=args.folder,
        sessions=args.sessions,
        runs=args.runs,
        progress=print,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print("\n".join(markdown(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
