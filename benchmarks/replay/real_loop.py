"""Compaction in a real agent loop: never over the window, a verbatim tail, no task lost.

Two kinds of session run through the same loop: the real transcripts of ../shared/transcripts
(imported with `compaction.importers.load`; a format that does not import is skipped and
named), and generated sessions made of one request followed by a single turn of 100 tool rounds,
some of whose outputs are larger than the window. Each runs at windows of 8,192 and 32,000
tokens with the 2,563-token tool catalog of ``prompts/examples/coding_tools.json`` and the
default policy otherwise (threshold 0.9, retain 0.1, tool outputs clipped at 0.1 of the window).

The loop appends the session's events to a live `Session` (its tool-output cap set from the
policy); before each model call (each assistant message, and one more at the end when the agent
still owes an answer) it compacts when the whole request is due (`maybe_compact` with
`prompts.fixed_tokens`), then measures the request: fixed part + context view, counted the
toolkit's way (`count_message` per message, the catalog as canonical JSON). Mode switches append
a mode message (the default).

Per window and source it reports the peak request and how many calls went over the window; for
each compaction whether a verbatim tail was kept when one fitted (a cut with a non-empty tail
within the retain budget and the room beside the Checkpoint); and task retention: every
unfinished item of the latest list in Pending Jobs / Current Work of every Checkpoint, verbatim,
and every unfinished task of the shared list there too, by id and subject.

It also sums B's input tokens on the three benchmark sessions (12 turns seeds 0 and 1, 24 turns
seed 2; window 30,000; `benchmarks.replay`) with the whole-request budget.

Run: ``python -m benchmarks.replay.real_loop [--quick] [--out PATH]`` (default
``benchmarks/results/real_loop.json``; ``--quick``: one 30-round session and the smallest
transcript, for the test suite).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import CHECKOUT
from benchmarks.replay.long_turn import long_turn as long_turn
from compaction import (
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    EventData,
    Message,
    Session,
    TranscriptError,
    TurnStartData,
    compaction_due,
    count_message,
    maybe_compact,
    parse_checkpoint,
)
from compaction.cuts import cut_points
from compaction.importers import load
from compaction.views import checkpoint_message_for
from harness.simulation import ENVIRONMENT, STRATEGIES, generate, log_payloads, replay
from prompts import (
    DEFAULT_MODE,
    Mode,
    PromptBuilder,
    ToolCatalog,
    fixed_tokens,
    get_mode,
    request_size,
    switch_mode,
)

ROOT = CHECKOUT
TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"
CATALOG = ROOT / "prompts" / "examples" / "coding_tools.json"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "real_loop.json"
WINDOWS: tuple[int, ...] = (8_192, 32_000)
SUFFIXES = (".jsonl", ".json", ".traj")
BENCH_SESSIONS: tuple[tuple[int, int], ...] = ((12, 0), (12, 1), (24, 2))
"""The three benchmark sessions (turns, seed), as `harness bench` runs them."""
BENCH_WINDOW = 30_000


# --- the loop -------------------------------------------------------------------------------


@dataclass
class LoopResult:
    """One session run at one window."""

    name: str
    window: int
    calls: int = 0
    peak_request: int = 0
    over_window: int = 0
    compactions: int = 0
    tail_fitted: int = 0
    """Compactions where a non-empty tail fitted the retain budget and the room."""
    tail_kept: int = 0
    """Of those, compactions that kept a non-empty tail."""
    tasks_expected: int = 0
    """Unfinished todo items and shared tasks checked, over every Checkpoint."""
    tasks_kept: int = 0
    shared_tasks_expected: int = 0
    """Of `tasks_expected`, the shared list's tasks (matched by id and subject)."""
    shared_tasks_kept: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    clipped: int = 0

    def as_json(self) -> dict[str, Any]:
        """Return the figures as plain data."""
        return {
            "name": self.name,
            "window": self.window,
            "calls": self.calls,
            "peak_request_tokens": self.peak_request,
            "calls_over_window": self.over_window,
            "compactions": self.compactions,
            "compactions_where_a_tail_fitted": self.tail_fitted,
            "of_which_kept_a_tail": self.tail_kept,
            "unfinished_tasks_checked": self.tasks_expected,
            "unfinished_tasks_kept": self.tasks_kept,
            "shared_tasks_checked": self.shared_tasks_expected,
            "shared_tasks_kept": self.shared_tasks_kept,
            "refused": dict(sorted(self.refused.items())),
            "clipped_tool_outputs": self.clipped,
        }


@dataclass
class _Loop:
    session: Session
    policy: CompactionPolicy
    builder: PromptBuilder
    fixed: int
    result: LoopResult
    prompt_mode: Mode | None = None
    run_mode: Mode | None = None

    def start(self, data: TurnStartData) -> None:
        self.session.append(data)
        new = get_mode(data.mode or DEFAULT_MODE)
        if self.prompt_mode is None or self.run_mode is None:
            self.prompt_mode = self.run_mode = new
            return
        self.prompt_mode = switch_mode(
            self.session, self.builder, self.prompt_mode, new, current=self.run_mode
        )
        self.run_mode = new

    def call(self) -> None:
        s, policy = self.session, self.policy
        if compaction_due(s, policy, self.fixed):
            # maybe_compact's own check: in provider tokens once usage reports taught the scale
            self.compact()
        request = self.fixed + s.context_tokens + policy.output_reserve
        self.result.calls += 1
        self.result.peak_request = max(self.result.peak_request, request)
        self.result.over_window += request > policy.window_tokens

    def compact(self) -> None:
        s = self.session
        before = s.context
        tokens = [s.usage.per_event[q - 1] for q in before.seqs]
        latest = s.latest_todos
        expected = (
            [t.content for t in latest if t.status == "pending"],
            [t.content for t in latest if t.status == "in_progress"],
        )
        board = s.tasks.live()
        tasks = (
            [(t.id, t.subject) for t in board if t.status == "pending"],
            [(t.id, t.subject) for t in board if t.status == "in_progress"],
        )
        try:
            done = maybe_compact(s, self.policy, fixed_tokens=self.fixed)
        except CompactionError as exc:
            self.result.refused[exc.code] += 1
            return
        if done is None:
            # due by the check above, yet nothing to compact (the learned scale moved it)
            return
        self.result.compactions += 1
        if self.tail_fitted(before.messages, before.system, tokens, done):
            self.result.tail_fitted += 1
            self.result.tail_kept += done.kept_messages > 0
        parsed = parse_checkpoint(done.data.text)
        wanted = expected[0] + expected[1]
        self.result.tasks_expected += len(wanted) + len(tasks[0]) + len(tasks[1])
        self.result.tasks_kept += sum(1 for t in expected[0] if t in parsed.pending_jobs) + sum(
            1 for t in expected[1] if t in parsed.current_work
        )
        carried = (
            {(t.id, t.subject) for t in parsed.pending_tasks},
            {(t.id, t.subject) for t in parsed.current_tasks},
        )
        self.result.shared_tasks_expected += len(tasks[0]) + len(tasks[1])
        kept = sum(1 for t in tasks[0] if t in carried[0]) + sum(
            1 for t in tasks[1] if t in carried[1]
        )
        self.result.tasks_kept += kept
        self.result.shared_tasks_kept += kept

    def tail_fitted(
        self,
        messages: Sequence[Message],
        system: Sequence[Message],
        tokens: Sequence[int],
        done: CompactionResult,
    ) -> bool:
        """Tell whether some cut kept a non-empty tail within retain and beside the Checkpoint.

        Measured with the policy `maybe_compact` compacted with: in counted tokens once the
        session learned the provider's scale (`CompactionPolicy.in_counted_tokens`), at most the
        window a refusal proved.
        """
        tok = self.session.tokenizer
        policy = self.policy.capped(self.session.refused_window).in_counted_tokens(
            self.session.token_scale
        )
        size = count_message(tok, checkpoint_message_for(done.data.text))
        room = policy.room_tokens - self.fixed - sum(count_message(tok, m) for m in system)
        budget = min(policy.retain_tokens, room - size - policy.summary_tokens)
        tail = [0] * (len(tokens) + 1)
        for i in range(len(tokens) - 1, -1, -1):
            tail[i] = tail[i + 1] + tokens[i]
        return any(c < len(messages) and tail[c] <= budget for c in cut_points(messages))


def run_loop(
    name: str, payloads: Sequence[EventData], window: int, builder: PromptBuilder, workdir: Path
) -> LoopResult:
    """Run one session through the agent loop at one window."""
    policy = CompactionPolicy(window_tokens=window)
    path = workdir / f"{name}-{window}.jsonl"
    result = LoopResult(name=name, window=window)
    with Session(path, sync="batch", tool_output_cap=policy.tool_output_tokens) as session:
        fixed = fixed_tokens(builder, get_mode(DEFAULT_MODE), tokenizer=session.tokenizer)
        loop = _Loop(session, policy, builder, fixed, result)
        last: EventData | None = None
        with session.batch():
            for p in payloads:
                if isinstance(p, TurnStartData):
                    loop.start(p)
                    continue
                if isinstance(p, Message) and p.role == "assistant":
                    loop.call()
                event = session.append(p)
                result.clipped += isinstance(p, Message) and bool(getattr(event.data, "clip", None))
                last = p
            if isinstance(last, Message) and last.role != "assistant":
                loop.call()
    return result


def transcript_sessions(folder: Path) -> tuple[list[tuple[str, list[EventData]]], dict[str, str]]:
    """Import every transcript of `folder`; return the sessions and the files skipped, with why."""
    sessions: list[tuple[str, list[EventData]]] = []
    skipped: dict[str, str] = {}
    for path in sorted(folder.iterdir()) if folder.is_dir() else ():
        if path.suffix not in SUFFIXES:
            continue
        try:
            payloads = log_payloads(load(path))
        except TranscriptError as exc:
            skipped[path.name] = str(exc)
            continue
        if not any(isinstance(p, Message) and p.role == "assistant" for p in payloads):
            skipped[path.name] = "imported no model call (the format is not read yet)"
            continue
        sessions.append((path.name, payloads))
    return sessions, skipped


def summarize(results: Iterable[LoopResult]) -> dict[str, Any]:
    """Return the pooled figures of several runs at one window."""
    rs = list(results)
    fitted = sum(r.tail_fitted for r in rs)
    expected = sum(r.tasks_expected for r in rs)
    return {
        "sessions": len(rs),
        "calls": sum(r.calls for r in rs),
        "peak_request_tokens": max((r.peak_request for r in rs), default=0),
        "calls_over_window": sum(r.over_window for r in rs),
        "compactions": sum(r.compactions for r in rs),
        "refused": dict(sum((r.refused for r in rs), Counter())),
        "tail_kept_when_one_fitted": (sum(r.tail_kept for r in rs) / fitted) if fitted else None,
        "compactions_where_a_tail_fitted": fitted,
        "task_retention": (sum(r.tasks_kept for r in rs) / expected) if expected else None,
        "unfinished_tasks_checked": expected,
        "shared_tasks_checked": sum(r.shared_tasks_expected for r in rs),
        "clipped_tool_outputs": sum(r.clipped for r in rs),
    }


def b_input_tokens(sessions: Sequence[tuple[int, int]], window: int) -> dict[str, int]:
    """Return B's summed input tokens per benchmark session, whole-request budget."""
    policy = CompactionPolicy(window_tokens=window)
    return {
        f"synthetic-t{t}-s{s}": replay(
            generate(t, s), STRATEGIES["B"], policy=policy
        ).total_prompt_tokens
        for t, s in sessions
    }


def run(*, quick: bool = False, transcripts: Path = TRANSCRIPTS) -> dict[str, Any]:
    """Run the benchmark; return the results document."""
    started = time.perf_counter()
    builder = PromptBuilder(ToolCatalog.from_file(CATALOG), environment=ENVIRONMENT)
    real, skipped = transcript_sessions(transcripts)
    if quick:
        real = sorted(real, key=lambda s: len(s[1]))[:1]
    generated = [
        (f"long-turn-s{seed}", long_turn(seed, 30 if quick else 100))
        for seed in (range(1) if quick else range(5))
    ]
    size = request_size(builder, get_mode(DEFAULT_MODE))
    doc: dict[str, Any] = {
        "tool_catalog_tokens": size.tools,
        "system_prompt_tokens": size.system,
        "windows": {},
        "skipped_transcripts": skipped,
    }
    with tempfile.TemporaryDirectory() as tmp:
        for window in WINDOWS:
            by_source: dict[str, Any] = {}
            for source, sessions in (("transcripts", real), ("generated", generated)):
                rs = [run_loop(n, p, window, builder, Path(tmp)) for n, p in sessions]
                by_source[source] = summarize(rs) | {"runs": [r.as_json() for r in rs]}
            doc["windows"][str(window)] = by_source
    bench = BENCH_SESSIONS[:1] if quick else BENCH_SESSIONS
    doc["b_summed_input_tokens"] = {
        "window": BENCH_WINDOW,
        "sessions": b_input_tokens(bench, BENCH_WINDOW),
    }
    doc["seconds"] = round(time.perf_counter() - started, 1)
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and write the JSON results."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.replay.real_loop")
    parser.add_argument("--quick", action="store_true", help="a smoke run for the test suite")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results file (JSON)")
    parser.add_argument("--transcripts", type=Path, default=TRANSCRIPTS, help="transcripts folder")
    args = parser.parse_args(argv)
    doc = run(quick=args.quick, transcripts=args.transcripts)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for window, sources in doc["windows"].items():
        for source, s in sources.items():
            print(
                f"window {window} {source}: {s['sessions']} sessions, {s['calls']} calls, "
                f"peak request {s['peak_request_tokens']}, over window {s['calls_over_window']}, "
                f"{s['compactions']} compactions, tail kept when one fitted: "
                f"{s['tail_kept_when_one_fitted']}, task retention {s['task_retention']}"
            )
    print(f"B summed input tokens: {doc['b_summed_input_tokens']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
