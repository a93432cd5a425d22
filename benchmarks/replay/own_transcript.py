"""Your own transcript replayed: ``harness bench --transcript FILE [--window N] [--json]``.

Any transcript the importers read (Claude Code, Codex, Gemini CLI, SWE-agent, OpenAI messages;
`compaction.importers.load`) is replayed request by request, as the shared real transcripts are
(`benchmarks.replay.real_transcripts`), at the benchmark's matched whole-request budget
(`benchmarks.matched`: 0.8 of the window) under:

- ``B``: this toolkit (Checkpoint with the todo list and tasks copied by code, extractive
  summarizer);
- ``none``: no compaction, the todo list kept only in the messages;
- each peer whose environment exists (`benchmarks.peers.venvs`; none is created here), in its
  matched configuration (`PEER_RUNS`), its summary calls priced.

Each design's record has the fields of the committed results: ``summed_input_tokens``, ``cost``
and ``cost_without_summaries`` per provider, ``compactions``, ``request_retention`` (calls whose
request shows every unfinished todo at its latest status) and ``task_retention`` (the same for
the shared tasks; None where no call had one open). A peer whose environment is missing is
listed in ``skipped`` with the reason.

Invariants: the records are a pure function of the transcript, the window and the peers'
pinned environments; nothing is made up for a peer that did not run.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.matched import matched_policy
from benchmarks.replay.real_transcripts import replay_session, write_exchange
from benchmarks.report.comparison import peer_row
from harness.simulation import default_prices

RUNS: tuple[str, ...] = ("B", "none")
"""Our designs replayed: B, and no compaction (the list kept only in the messages)."""
PEER_RUNS: tuple[tuple[str, str, str], ...] = (
    ("langchain-summarization", "tail-tokens", "copy-todos"),
    ("langchain-trim", "default", "none"),
    ("deepagents", "default", "copy-todos"),
    ("openhands-condenser", "tokens", "copy-todos"),
)
"""(peer, variant, fake summarizer) of each peer: its matched-budget configuration, with the
summarizer that copies the todo list and tasks it is shown (the best a peer's summary can do)."""
DEFAULT_WINDOW = 30_000
"""The benchmark's window (the matched budget is 0.8 of it: 24,000 tokens)."""

Progress = Callable[[str], None]


def session_name(path: Path) -> str:
    """Return the name the replay gives a transcript: ``own-`` and the file's stem."""
    return f"own-{path.stem}"


def run(
    path: Path,
    *,
    window: int = DEFAULT_WINDOW,
    peers: bool = True,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Replay the transcript under `RUNS` and the peers present; return plain data.

    Raises:
        TranscriptError: the file is not a transcript the importers read.
    """
    say = progress or (lambda _line: None)
    name = session_name(path)
    policy = matched_policy(window)
    ours = replay_session(name, path, policy, RUNS)
    say(f"{name}: B and none replayed")
    records = [_ours(r) for r in ours]
    skipped: dict[str, str] = {}
    if peers:
        done, skipped = _peers(name, path, policy.trigger_tokens, ours[0]["output_tokens"], say)
        records += done
    return {
        "session": name,
        "source": str(path),
        "window": window,
        "budget": policy.trigger_tokens,
        "output_tokens": ours[0]["output_tokens"],
        "runs": records,
        "skipped": skipped,
    }


def _ours(record: Mapping[str, Any]) -> dict[str, Any]:
    """Return one of our real-transcript records as a `--transcript` run."""
    return {
        "strategy": record["strategy"],
        "session": record["session"],
        "requests": record["requests"],
        "compactions": record["compactions"],
        "summed_input_tokens": record["summed_input_tokens"],
        "peak_input_tokens": record["peak_input_tokens"],
        "cost": _usd(record["cost"]),
        "cost_without_summaries": _usd(record["cost_without_summaries"]),
        "summary_calls": record.get("summary_calls", 0),
        "todo_checks": record["todo_checks"],
        "request_retention": record["request_retention"],
        "task_checks": record["task_checks"],
        "task_retention": record["task_every_call"] if record["task_checks"] else None,
    }


def _usd(cost: Mapping[str, Any]) -> dict[str, float]:
    return {provider: round(float(c["usd"]), 6) for provider, c in cost.items()}


def _peers(
    name: str, path: Path, budget: int, output: int, say: Progress
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Run each peer configuration whose venv exists; return its runs and the skipped ones."""
    from benchmarks.peers.run import run_peers  # loads the peers' machinery only when asked

    table = default_prices()
    runs: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="own-transcript-") as tmp:
        exchange = write_exchange(name, path, Path(tmp) / f"{name}.json")
        for peer, variant, summarizer in PEER_RUNS:
            out = Path(tmp) / peer
            out.mkdir()
            (record,) = run_peers(
                [exchange],
                out,
                budget=budget,
                install=False,
                workers=1,
                only=[peer],
                variants=[variant],
                summarizers=[summarizer],
            )
            label = f"{peer}/{variant} ({summarizer})"
            row = peer_row(record, output, table)
            if row is None:
                skipped[label] = str(record.get("reason") or record.get("status"))
                say(f"{label}: skipped ({skipped[label]})")
                continue
            runs.append(_peer_run(label, name, record["metrics"], row))
            say(f"{label}: replayed")
    return runs, skipped


def _peer_run(
    label: str, name: str, metrics: Mapping[str, Any], row: Mapping[str, Any]
) -> dict[str, Any]:
    """Return a peer's record (metrics and its comparison row) as a `--transcript` run."""
    return {
        "strategy": label,
        "session": name,
        "requests": metrics["requests"],
        "compactions": row["compactions"],
        "summed_input_tokens": metrics["summed_input_tokens"],
        "peak_input_tokens": metrics["peak_input_tokens"],
        "cost": _usd(row["cost"]),
        "cost_without_summaries": _usd(row["cost_without_summaries"]),
        "summary_calls": row.get("summary_calls", 0),
        "todo_checks": metrics["todo_checks"],
        "request_retention": metrics["todo_retention_rate"],
        "task_checks": metrics.get("task_checks", 0),
        "task_retention": (
            metrics.get("task_retention_rate") if metrics.get("task_checks") else None
        ),
    }


def markdown(result: Mapping[str, Any]) -> str:
    """Return the replay as a Markdown table, one row per design, and the peers skipped."""
    providers = list(result["runs"][0]["cost"]) if result["runs"] else []
    head = [
        "design",
        "calls",
        "compactions",
        "input tokens",
        *(f"cost {p}" for p in providers),
        "open todos in sight (every call)",
        "open tasks in sight (every call)",
    ]
    lines = [
        f"`{result['source']}` as `{result['session']}`: window {result['window']:,}, "
        f"compaction at {result['budget']:,} tokens of the whole request; cost with each "
        "design's summary calls priced.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in result["runs"]:
        cells = [
            r["strategy"],
            f"{r['requests']}",
            f"{r['compactions']}",
            f"{r['summed_input_tokens']:,}",
            *(f"${r['cost'][p]:.4f}" for p in providers),
            _share(r["request_retention"], r["todo_checks"]),
            _share(r["task_retention"], r["task_checks"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    for label, reason in result["skipped"].items():
        lines.append(f"\nSkipped {label}: {reason}")
    return "\n".join(lines) + "\n"


def _share(rate: float | None, checks: int) -> str:
    return "-" if rate is None or not checks else f"{rate:.1%} of {checks}"
