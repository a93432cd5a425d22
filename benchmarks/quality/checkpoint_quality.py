"""Checkpoint probes: does the request after each compaction still tell the model the truth?

Every compaction of a replay is probed on the request the model sees next (the Checkpoint and
the messages kept verbatim after it) by `benchmarks.quality.checkpoint_probes`: an implementation of
its own (its own Checkpoint parser, its own reading of the log, tasks matched by id and
subject), one probe per rule of the Checkpoint (listed there).

Corpora: generated sessions (`harness.simulation.generate`) and the real transcripts in
``../shared/transcripts`` (imported with `compaction.importers.load`, their own recorded
compactions appended as they happened). Summarizers: ``extractive`` and ``openai``, the LLM
summarizer talking over HTTP to the local stand-in model (`harness.testing._model_server`, answers
of `benchmarks.replay.summary_cache.stand_in_answer`). A probe that does not apply to a compaction
(no error in its span, no task in progress) is not counted.

Each corpus runs at one window, or at each of ``--windows``; ``--cuts`` also forces a
compaction at those fractions of each session, where none may have been due.

Run: ``python -m benchmarks.quality.checkpoint_quality [--window W | --windows W ...] [--cuts F ...]
[--summarizers ...]``
(writes ``benchmarks/results/checkpoint_quality.json`` and prints the table); ``harness bench``
runs it too and puts the table in its report.

Invariants: deterministic (same corpora and window: same figures); offline (the model is the
stub on loopback).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import CHECKOUT
from benchmarks.quality.checkpoint_probes import PROBES, probe
from benchmarks.quality.probe_reading import Compaction, LogSoFar
from benchmarks.replay.real_transcripts import transcripts_folder
from benchmarks.replay.summary_cache import stand_in_answer
from compaction import (
    CheckpointData,
    CompactionError,
    CompactionPolicy,
    EventData,
    Session,
    Summarizer,
    TranscriptError,
    compact,
    get_tokenizer,
    maybe_compact,
)
from compaction.importers import load
from harness.simulation import generate
from harness.testing import StubModel

ROOT = CHECKOUT
DEFAULT_TRANSCRIPTS = transcripts_folder()
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "checkpoint_quality.json"
SUFFIXES = (".jsonl", ".json", ".traj")
SUMMARIZERS: tuple[str, ...] = ("extractive", "openai")

# --- replays -----------------------------------------------------------------------------------


SummarizerMaker = Callable[[Session], Summarizer | None]


def replay_probes(
    payloads: Iterable[EventData],
    policy: CompactionPolicy,
    make: SummarizerMaker,
    workdir: Path,
    cuts: Sequence[float] = (),
) -> list[dict[str, bool]]:
    """Replay payloads into a fresh session, compacting when due; probe every compaction.

    `cuts` are fractions of the events (``0.5``: half-way) after which a compaction is forced
    too, so a transcript is also probed where no compaction was due.
    """
    items = list(payloads)
    forced = {max(1, round(f * len(items))) - 1 for f in cuts if 0 < f <= 1}
    verdicts: list[dict[str, bool]] = []
    log = LogSoFar()
    with Session(workdir / "replay.jsonl", sync="batch") as session, session.batch():
        summarizer = make(session)
        for index, data in enumerate(items):
            if isinstance(data, CheckpointData):
                previous = session.context.checkpoint
                first = previous.last_seq + 1 if previous else 1
                if session.applied_seq < first:
                    continue
                data = data.model_copy(update={"first_seq": first, "last_seq": session.applied_seq})
            log.events.append(session.append(data))
            try:
                result = maybe_compact(session, policy, summarizer=summarizer)
                if result is None and index in forced:
                    result = compact(session, policy, summarizer=summarizer, force=True)
            except CompactionError:
                continue
            if result is not None and result.event is not None:
                log.events.append(result.event)
                d = result.data
                seen = Compaction(d.text, d.first_seq, d.last_seq, session.context.messages)
                verdicts.append(probe(log, seen))
    return verdicts


def _imported(path: Path) -> list[EventData]:
    return [event.data for event in load(path, tokenizer=get_tokenizer())]


def transcripts(folder: Path) -> list[Path]:
    """The transcript files of a folder, sorted."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES and p.is_file())


def _openai_maker(stub: StubModel) -> SummarizerMaker:
    from compaction.llm import ChatClient, ChatConfig
    from compaction.summarizers import OpenAISummarizer
    from prompts import openai_message

    client = ChatClient(ChatConfig(base_url=stub.base_url, model="stand-in", max_retries=0))

    def make(session: Session) -> Summarizer:
        def request() -> dict[str, Any]:
            return {"messages": [openai_message(m) for m in session.context.as_messages()]}

        return OpenAISummarizer(client, request, tokenizer=session.tokenizer)

    return make


@dataclass
class Tally:
    """Probe verdicts of one summarizer over one corpus."""

    compactions: int = 0
    passed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PROBES, 0))
    applicable: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PROBES, 0))
    failures: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Transcripts that could not be imported, with why."""

    def add(self, where: str, verdicts: Sequence[Mapping[str, bool]]) -> None:
        """Count the verdicts of one replay."""
        for i, verdict in enumerate(verdicts):
            self.compactions += 1
            for name, ok in verdict.items():
                self.applicable[name] += 1
                self.passed[name] += ok
                if not ok and len(self.failures) < 40:
                    self.failures.append(f"{where} #{i + 1}: {name}")

    @property
    def score(self) -> float:
        """Share of applicable probes passed (1.0 with none)."""
        total = sum(self.applicable.values())
        return sum(self.passed.values()) / total if total else 1.0

    def as_json(self) -> dict[str, Any]:
        """The tally as JSON data."""
        return {
            "compactions": self.compactions,
            "score": round(self.score, 4),
            "passed": self.passed,
            "applicable": self.applicable,
            "failures": self.failures,
            "skipped": self.skipped,
        }


DEFAULT_SESSIONS: tuple[tuple[int, int], ...] = ((12, 0), (12, 1), (24, 2))
"""(turns, seed) of the generated sessions: the benchmark's own three."""


Corpus = list[tuple[str, Callable[[], Iterable[EventData]]]]
"""(where, a function returning the session's events) per session of a corpus."""


def _corpora(sessions: Sequence[tuple[int, int]], real: Sequence[Path]) -> dict[str, Corpus]:
    """Return the generated and the real corpus, each session read only when probed."""
    return {
        "generated": [
            (f"generated t{turns} s{seed}", partial(generate, turns, seed))
            for turns, seed in sessions
        ],
        "real": [(p.name, partial(_imported, p)) for p in real],
    }


def run_quality(
    *,
    window: int = 32_000,
    sessions: Sequence[tuple[int, int]] = DEFAULT_SESSIONS,
    transcripts_dir: Path = DEFAULT_TRANSCRIPTS,
    summarizers: Sequence[str] = SUMMARIZERS,
    max_transcripts: int | None = None,
    windows: Sequence[int] = (),
    cuts: Sequence[float] = (),
) -> dict[str, Any]:
    """Probe every compaction of the generated and real corpora, per summarizer.

    `max_transcripts` reads only the first N real transcripts (a quick run reads one). With
    `windows`, every corpus runs at each of them (`window` is then the first); with `cuts`, a
    compaction is also forced at those fractions of each session (see `replay_probes`). The
    scores pool every window; ``by_window`` holds each window's own.
    """
    sizes = list(windows) or [window]
    real = transcripts(transcripts_dir)[:max_transcripts]
    corpora = _corpora(sessions, real)
    out: dict[str, Any] = {
        "window": sizes[0],
        "windows": sizes,
        "cuts": list(cuts),
        "sessions": [list(s) for s in sessions],
        "transcripts": [p.name for p in real],
        "transcripts_folder": str(transcripts_dir),
        "scores": {},
        "by_window": {},
    }
    with StubModel([stand_in_answer]) as stub, tempfile.TemporaryDirectory() as tmp:
        makers: dict[str, SummarizerMaker] = {
            "extractive": lambda session: None,
            "openai": _openai_maker(stub),
        }
        for name in summarizers:
            out["scores"][name] = {}
            for corpus, runs in corpora.items():
                probe = partial(_probe_corpus, runs, makers[name], Path(tmp) / f"{name}-{corpus}")
                pooled = Tally()
                for size in sizes:
                    tally = probe(size, cuts, pooled)
                    out["by_window"].setdefault(str(size), {}).setdefault(name, {})[corpus] = (
                        tally.as_json()
                    )
                out["scores"][name][corpus] = pooled.as_json()
    return out


def _probe_corpus(
    runs: Corpus,
    maker: SummarizerMaker,
    root: Path,
    size: int,
    cuts: Sequence[float],
    pooled: Tally,
) -> Tally:
    """Probe one corpus at one window; add its verdicts to `pooled` and return its own tally."""
    tally = Tally()
    policy = CompactionPolicy(window_tokens=size)
    for i, (where, events) in enumerate(runs):
        work = root / f"{size}-{i}"
        work.mkdir(parents=True)
        try:
            stream = events()
        except TranscriptError as exc:  # a format this toolkit cannot read yet
            tally.skipped.append(f"{where}: {exc}")
            continue
        verdicts = replay_probes(stream, policy, maker, work, cuts)
        tally.add(f"{where} @{size}", verdicts)
        pooled.add(f"{where} @{size}", verdicts)
    pooled.skipped += tally.skipped
    return tally


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def markdown(results: Mapping[str, Any]) -> list[str]:
    """The report's table: score per summarizer and corpus, then per probe."""
    generated = ", ".join(f"{t} turns seed {s}" for t, s in results["sessions"])
    lines = [
        f"Windows {', '.join(f'{w:,}' for w in results.get('windows', [results['window']]))} "
        f"tokens; forced cuts at {results.get('cuts') or 'none'}; generated sessions: "
        f"{generated}; real: "
        f"{_plural(len(results['transcripts']), 'transcript')} of "
        f"`{results.get('transcripts_folder', '../shared/transcripts')}`. A cell is "
        "probes passed / compactions where the probe applies.",
        "",
        "| summarizer | corpus | compactions | score | " + " | ".join(PROBES) + " |",
        "|---|---|---|---|" + "---|" * len(PROBES),
    ]
    for name, corpora in results["scores"].items():
        for corpus, tally in corpora.items():
            cells = [
                f"{tally['passed'][p]}/{tally['applicable'][p]}" if tally["applicable"][p] else "-"
                for p in PROBES
            ]
            lines.append(
                f"| {name} | {corpus} | {tally['compactions']} | {tally['score']:.1%} | "
                + " | ".join(cells)
                + " |"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Run the probes and write the JSON results."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quality.checkpoint_quality")
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument(
        "--windows", type=int, nargs="+", default=[], help="run at each of these windows"
    )
    parser.add_argument(
        "--cuts",
        type=float,
        nargs="+",
        default=[],
        help="also force a compaction at these fractions of each session (0.25 0.5 ...)",
    )

    parser.add_argument("--transcripts", type=Path, default=DEFAULT_TRANSCRIPTS)
    parser.add_argument("--summarizers", nargs="+", choices=SUMMARIZERS, default=SUMMARIZERS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    results = run_quality(
        window=args.window,
        windows=args.windows,
        cuts=args.cuts,
        transcripts_dir=args.transcripts,
        summarizers=args.summarizers,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    sys.stdout.write("\n".join(markdown(results)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
