"""The shared real transcripts replayed request by request under every strategy, priced.

Each transcript of ``../shared/transcripts`` that `REAL_SESSIONS` names is imported
(`compaction.importers.load`; its own recorded compactions dropped, `log_payloads`) and replayed
by `harness.simulation.replay` under every strategy and content-blind run, at the same matched
whole-request budget as the generated sessions (the run's compaction policy). Per run: model
calls, compactions, summed input tokens, cost under each provider's prices and cache model,
every-call retention of unfinished todos (calls whose request shows every unfinished item of
the latest list) and the unfinished items kept at compactions. Session names say where each
came from (agent, version, tool family, source file). Run it alone as
``python -m benchmarks.replay.real_transcripts --out FILE.json``; the full ``harness bench`` run
includes it.

Every-call retention is counted for the todo list and for the shared task list (TaskCreate /
TaskUpdate: each unfinished task's id at its latest status). The peers (`benchmarks/peers`)
replay the same sessions (`write_exchanges`) and are scored the same way.

Invariants: a run is a pure function of the transcript bytes, the strategy and the policy; a
missing folder or file gives a row with a reason, never an error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import CHECKOUT
from benchmarks.matched import matched_policy
from benchmarks.replay import summary_pricing
from benchmarks.splits import split_of
from compaction import CompactionPolicy, EventData, Message, get_tokenizer
from compaction.events import TaskCreateData, TaskUpdateData
from compaction.importers import load
from harness.simulation import (
    PROVIDER_MODELS,
    TODO_TOOL,
    TODO_TOOL_NAMES,
    PriceTable,
    ReplayResult,
    default_prices,
    log_payloads,
    output_tokens,
    replay,
    to_exchange,
    todo_call_list,
    user_tools,
)


def transcripts_folder() -> Path:
    """Return the shared real transcripts folder.

    ``$HARNESS_TRANSCRIPTS``, else ``../shared/transcripts`` of the checkout (or of the folder
    above it, for a worktree): the first that exists.
    """
    root = CHECKOUT
    env = os.environ.get("HARNESS_TRANSCRIPTS")
    found = [Path(env)] if env else []
    found += [root.parent / "shared" / "transcripts", root.parents[1] / "shared" / "transcripts"]
    return next((d for d in found if d.is_dir()), found[0])


TRANSCRIPTS = transcripts_folder()
"""The shared real transcripts (``../shared/transcripts``; see `transcripts_folder`)."""

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
"""Session name -> transcript file. No Codex transcript is shared yet: `sessions_in` adds any
that appears (a file whose name starts ``codex``, as ``SOURCES.md`` names them)."""

CODEX_PREFIX = "codex"


def sessions_in(folder: Path) -> dict[str, str]:
    """Return `REAL_SESSIONS` plus each Codex transcript in `folder`, by name.

    A ``codex*.jsonl`` file there becomes ``real-codex-<rest of its stem>`` (lower case, runs of
    other characters as one ``-``), sorted by file name, so a shared Codex session is replayed
    by every design and peer as soon as it is copied in.
    """
    found = dict(REAL_SESSIONS)
    known = set(found.values())
    files = sorted(folder.glob(f"{CODEX_PREFIX}*.jsonl")) if folder.is_dir() else []
    for path in files:
        if path.name in known:
            continue
        rest = re.sub(r"[^a-z0-9.]+", "-", path.stem[len(CODEX_PREFIX) :].lower()).strip("-")
        found[f"real-codex-{rest or 'session'}"] = path.name
    return found


QUICK_SESSIONS: tuple[str, ...] = ("real-swe-agent-gpt4-pydicom-1458",)
"""The one short transcript a quick run replays."""

Progress = Callable[[str], None]


def run_names() -> list[str]:
    """Return every run: the strategies, the content-blind runs, B with its LLM summarizer."""
    return summary_pricing.run_names()


def session_tools(payloads: Sequence[EventData]) -> list[dict[str, Any]]:
    """Return the tool specs a real session's replay sends.

    The generated sessions' catalog plus one open spec per other tool the session calls (sorted
    by name; the todo tools are the builder's own). The peers' exchange files carry the same
    list, so every design sends the same tools.
    """
    known = {spec["function"]["name"] for spec in user_tools()} | TODO_TOOL_NAMES
    called = sorted(
        {
            call.function.name
            for p in payloads
            if isinstance(p, Message) and p.tool_calls
            for call in p.tool_calls
        }
        - known
    )
    extra = [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": f"The recorded session's {name} tool.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
        for name in called
    ]
    return [*user_tools(), *extra]


def replay_session(
    name: str, path: Path, policy: CompactionPolicy, runs: Sequence[str]
) -> list[dict[str, Any]]:
    """Replay one transcript under each of `runs`; return one record per run."""
    tok = get_tokenizer()
    payloads = log_payloads(load(path))
    tools = session_tools(payloads)
    session = _SessionFacts(
        name=name,
        source=path.name,
        output_tokens=output_tokens(payloads, tok),
        task_events=sum(isinstance(p, TaskCreateData | TaskUpdateData) for p in payloads),
        budget=policy.trigger_tokens,
    )
    table = default_prices()
    records = []
    for run in runs:
        with summary_pricing.run_summarizer(run, tok) as summarizer:
            result = replay(
                payloads,
                summary_pricing.strategy_of(run),
                policy=policy,
                tokenizer=tok,
                session_name=name,
                summarizer=summarizer,
                tools=tools,
            )
        records.append(_run_record(session, run, result, table))
    return records


@dataclass(frozen=True)
class _SessionFacts:
    """What every run's record says of the session itself."""

    name: str
    source: str
    output_tokens: int
    task_events: int
    budget: int


def _run_record(
    session: _SessionFacts, run: str, result: ReplayResult, table: PriceTable
) -> dict[str, Any]:
    """Return the record of one run: its sums, its cost, its retention, its per-request series."""
    models = [m.name for m in PROVIDER_MODELS]
    prompts = [r.prompt_tokens for r in result.records]
    hits = {m: [r.hits[m] for r in result.records] for m in models}
    summary = summary_pricing.from_replay(result.summary_calls, models)
    cost, without = summary_pricing.costs_with_summaries(
        table, prompts, hits, session.output_tokens, summary
    )
    return {
        "session": session.name,
        "source": session.source,
        "split": split_of(session.name),
        "strategy": run,
        "requests": len(result.records),
        "compactions": result.compactions,
        "summed_input_tokens": sum(prompts),
        "peak_input_tokens": max(prompts, default=0),
        "output_tokens": session.output_tokens,
        "cost": cost,
        "cost_without_summaries": without,
        **summary_pricing.record_fields(summary),
        "summary": summary,
        "todo_checks": result.todo_checks,
        "every_call": round(result.request_retention, 6),
        "request_retention": result.request_retention,
        "kept": result.kept,
        "expected": result.expected,
        "retention": {"expected": result.expected, "kept": result.kept, "rate": result.retention},
        "task_events": session.task_events,
        "task_checks": result.task_checks,
        "task_every_call": round(result.task_retention, 6),
        "budget": session.budget,
        "per_request": {
            "prompt_tokens": prompts,
            "fixed_tokens": [r.fixed_tokens for r in result.records],
            "checkpoint_tokens": [r.checkpoint_tokens for r in result.records],
            "hits": hits,
            "compacted": [r.index for r in result.records if r.compacted],
        },
    }


def peer_payloads(payloads: Sequence[EventData]) -> list[EventData]:
    """Return a real session's payloads as the peers' drivers take them.

    A todo-tool call (``TodoWrite``, Gemini CLI's ``write_todos``, Codex's ``update_plan``)
    becomes a ``todo_write`` call, which each driver turns into its peer's own todo tool, with
    each item's ``content`` and ``status`` (the fields every peer's tool takes; read as
    `harness.simulation.todo_call_list` reads them); a call the tool refused (no readable list)
    and every other call are kept as recorded.
    """
    out: list[EventData] = []
    for p in payloads:
        if isinstance(p, Message) and p.tool_calls:
            raw = p.model_dump(mode="json", exclude_none=True)
            for call in raw.get("tool_calls") or ():
                function = call["function"]
                written = todo_call_list(function["arguments"] or "{}")
                if function["name"] in TODO_TOOL_NAMES and written is not None:
                    items = [{"content": t.content, "status": t.status} for t in written]
                    function["name"] = TODO_TOOL
                    function["arguments"] = json.dumps({"todos": items}, ensure_ascii=False)
            out.append(Message.model_validate(raw))
        else:
            out.append(p)
    return out


def write_exchanges(
    out_dir: Path, *, folder: Path = TRANSCRIPTS, sessions: Sequence[str] | None = None
) -> list[Path]:
    """Write the named real sessions (default: all present) as exchange files for the peers.

    Each file carries the session's name, its source file and the same tool specs as our replay
    of it (`session_tools`); a missing transcript is left out.
    """
    paths = []
    named = sessions_in(folder)
    for name in sessions if sessions is not None else list(named):
        source = folder / named[name]
        if source.is_file():
            paths.append(write_exchange(name, source, out_dir / f"{name}.json"))
    return paths


def write_exchange(name: str, source: Path, target: Path) -> Path:
    """Write one transcript as the peers' exchange file (named `name`); return `target`.

    Raises:
        TranscriptError: the file is not a transcript the importers read.
    """
    payloads = log_payloads(load(source))
    doc = to_exchange(peer_payloads(payloads), name=name, source=source.name)
    doc["tools"] = session_tools(payloads)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True)
    target.write_text(text + "\n", encoding="utf-8")
    return target


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
    policy = matched_policy(window)
    named = sessions_in(folder)
    chosen = list(sessions) if sessions is not None else list(named)
    records: list[dict[str, Any]] = []
    missing: dict[str, str] = {}
    for name in chosen:
        path = folder / named[name]
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
        "(`benchmarks/replay/real_transcripts.py`). *Every call (todos)*: share of calls, made "
        "while the "
        "latest todo list had unfinished items, whose request shows every one of them at its "
        "latest status; *every call (tasks)*: the same for the shared task list's unfinished "
        "tasks (id and status). The peers replay the same sessions (`benchmarks/peers`).",
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
