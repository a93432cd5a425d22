"""Checkpoint probes: does the request after each compaction still tell the model the truth?

Every compaction of a replay is probed on the request the model sees next (the Checkpoint and
the messages kept verbatim after it), with deterministic checks written here, apart from the
summarizers' own code (their oracle is the log, read the plain way):

- ``first_request``: the session's first request a person typed is there (its head); when an
  earlier recorded summary of another agent replaced it, that summary is quoted instead;
- ``latest_request``: the latest request a person typed is there;
- ``no_injected_request``: no text the person did not type (injected context, skill bodies,
  command tags, interruption notices, mode messages) is given as a request or a constraint;
- ``next_step_consistent``: Next Step is not a question, does not say the work is done while
  a task is unfinished, and names the task in progress when there is one;
- ``latest_error``: the latest failing command output of the span is reported (its first error
  line) in Errors and Fixes, or still verbatim in the kept messages;
- ``edited_files``: every file the span edited is named in Files and Code (or the kept messages);
- ``no_ended_constraint``: no constraint typed in Plan mode is in Critical Context once Plan
  mode is over.

Corpora: generated sessions (`harness.simulation.generate`) and the real transcripts in
``../shared/transcripts`` (imported with `compaction.importers.load`, their own recorded
compactions appended as they happened). Summarizers: ``extractive`` and ``openai``, the LLM
summarizer talking over HTTP to the local stand-in model (`benchmarks.stub_model`, answers of
`benchmarks.summary_cache.stand_in_answer`). A probe that does not apply to a compaction (no
error in its span, no task in progress) is not counted.

Run: ``python -m benchmarks.checkpoint_quality [--window W] [--summarizers ...]``
(writes ``benchmarks/results/checkpoint_quality.json`` and prints the table); ``harness bench``
runs it too and puts the table in its report.

Invariants: deterministic (same corpora and window: same figures); offline (the model is the
stub on loopback).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.stub_model import StubModel
from benchmarks.summary_cache import stand_in_answer
from compaction import (
    CheckpointData,
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    Event,
    EventData,
    Message,
    MessageAdded,
    Session,
    Summarizer,
    TranscriptError,
    TurnStarted,
    get_tokenizer,
    maybe_compact,
)
from compaction.importers import load
from harness.simulation import generate

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "checkpoint_quality.json"
SUFFIXES = (".jsonl", ".json", ".traj")
PROBES: tuple[str, ...] = (
    "first_request",
    "latest_request",
    "no_injected_request",
    "next_step_consistent",
    "latest_error",
    "edited_files",
    "no_ended_constraint",
)
SUMMARIZERS: tuple[str, ...] = ("extractive", "openai")

HEAD = 50
_FAIL = re.compile(r"(?:[Ee]rror|ERROR)(?:\[\w+\])?:|\bFAIL\b|FAILED|panic:|\.go:\d+:\d+: ")
_DONE = re.compile(r"\b(?:done|finished|ready for review|all tests pass|is green)\b", re.I)
_CONSTRAINT = re.compile(r"\b(?:must|never|always|do not|don't|make sure)\b", re.I)
_EDIT_TOOLS = frozenset(
    {"edit", "write", "multiedit", "notebookedit", "edit_file", "write_file", "replace"}
)
_WORD = re.compile(r"[A-Za-z]{4,}")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (.+)$", re.M)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _head(text: str, n: int = HEAD) -> str:
    return _norm(text)[:n]


def _unescape(text: str) -> str:
    """Drop the backslash a Checkpoint puts before a line that would read as Markdown syntax."""
    return re.sub(r"(?m)^([ \t]*)\\", r"\1", text)


def _typed(message: Message) -> bool:
    return message.role == "user" and message.origin in (None, "user")


def _sections(text: str) -> dict[str, str]:
    """Split a rendered Checkpoint by its level-two headings (plainly, not with the parser)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n"):
        if line.startswith("## "):
            current = out.setdefault(line[3:].strip(), [])
        elif current is not None:
            current.append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


def _items(body: str) -> list[str]:
    return [json.loads(line[2:]) for line in body.split("\n") if line.startswith('- "')]


@dataclass
class LogSoFar:
    """What the replay appended so far, read the plain way."""

    events: list[Event] = field(default_factory=list)

    def messages(self, first: int = 1, last: int | None = None) -> list[tuple[int, Message]]:
        """Return the messages with seqs in ``first..last``."""
        top = last if last is not None else 10**12
        return [
            (e.seq, e.data)
            for e in self.events
            if isinstance(e, MessageAdded) and first <= e.seq <= top
        ]

    def mode_at(self, seq: int) -> str | None:
        """Return the mode of the turn `seq` belongs to."""
        turns = [(e.seq, e.data.mode) for e in self.events if isinstance(e, TurnStarted)]
        i = bisect_right([t[0] for t in turns], seq)
        return turns[i - 1][1] if i else None

    def foreign_checkpoints(self) -> list[CheckpointData]:
        """Return the checkpoints another agent recorded."""
        return [
            e.data
            for e in self.events
            if isinstance(e.data, CheckpointData) and e.data.summarizer in ("claude-code", "codex")
        ]


def probe(log: LogSoFar, result: CompactionResult, kept: Sequence[Message]) -> dict[str, bool]:
    """Return each applicable probe's verdict for one compaction."""
    data = result.data
    sections = {k: _unescape(v) for k, v in _sections(data.text).items()}
    tail = _norm("\n".join(m.text() for m in kept))
    seen = _norm(_unescape(data.text)) + "\n" + tail
    primary, critical = (
        sections.get("Primary Request and Intent", ""),
        sections.get("Critical Context", ""),
    )
    out: dict[str, bool] = {}
    typed = [(s, m) for s, m in log.messages(last=data.last_seq + len(kept) + 10**6) if _typed(m)]
    typed = [(s, m) for s, m in typed if m.text().strip()]
    if typed:
        first_seq, first = typed[0]
        foreign = [c for c in log.foreign_checkpoints() if c.last_seq >= first_seq]
        quoted = "Earlier summary (" in primary
        out["first_request"] = _head(first.text()) in seen or (bool(foreign) and quoted)
        out["latest_request"] = _head(typed[-1][1].text()) in seen
    injected = [
        m.text()
        for _, m in log.messages()
        if m.role == "user" and not _typed(m) and m.origin != "recorded_summary"
    ]
    injected = [_head(t, 40) for t in injected if len(_norm(t)) >= 20]
    if injected:
        asked = _norm(primary) + "\n" + _norm(critical)
        out["no_injected_request"] = not any(t in asked for t in injected)
    out["next_step_consistent"] = _next_step_ok(sections)
    error = _latest_error(log, data.first_seq, data.last_seq)
    if error is not None:
        out["latest_error"] = error in _norm(sections.get("Errors and Fixes", "")) or error in tail
    edited = _edited(log, data.first_seq, data.last_seq)
    if edited:
        files = sections.get("Files and Code", "") + "\n" + tail
        out["edited_files"] = all(name in files for name in edited)
    ended = _ended_constraints(log, data.last_seq + len(kept))
    if ended:
        out["no_ended_constraint"] = not any(c in _norm(critical) for c in ended)
    return out


def _next_step_ok(sections: Mapping[str, str]) -> bool:
    step = sections.get("Next Step", "")
    step = "" if step == "(none)" else step
    current = _items(sections.get("Current Work", ""))
    pending = _items(sections.get("Pending Jobs", ""))
    lines = [ln.strip().rstrip("*_)\"' ") for ln in step.split("\n")]
    if any(ln.endswith("?") for ln in lines):
        return False
    if (current or pending) and _DONE.search(step):
        return False
    if current:
        words = {w.lower() for w in _WORD.findall(current[0])}
        return bool(words & {w.lower() for w in _WORD.findall(step)})
    return True


def _latest_error(log: LogSoFar, first: int, last: int) -> str | None:
    """The first error line of the span's latest failing command output, as a head."""
    commands: set[str] = set()
    latest: str | None = None
    for _, message in log.messages(first, last):
        for call in message.tool_calls or ():
            if any(k in call.function.arguments for k in ('"command"', '"cmd"')):
                commands.add(call.id)
        if message.role == "tool" and message.tool_call_id in commands:
            lines = [ln.strip() for ln in message.text().split("\n")]
            bad = [ln for ln in lines if _FAIL.search(ln) and not ln.startswith(("raise", "#"))]
            if bad:
                latest = _head(bad[0], 40)
    return latest


def _edited(log: LogSoFar, first: int, last: int) -> set[str]:
    """Base names of the files the span's edit tool calls changed."""
    names: set[str] = set()
    for _, message in log.messages(first, last):
        for call in message.tool_calls or ():
            if call.function.name.lower() not in _EDIT_TOOLS | {"apply_patch"}:
                continue
            try:
                args = json.loads(call.function.arguments)
            except ValueError:
                continue
            if not isinstance(args, dict):
                continue
            paths = [args.get(k) for k in ("file_path", "path", "notebook_path")]
            paths += _PATCH_FILE.findall(str(args.get("input", "")))
            names |= {p.strip().rsplit("/", 1)[-1] for p in paths if isinstance(p, str) and p}
    return names


def _ended_constraints(log: LogSoFar, upto: int) -> list[str]:
    """Constraint sentences typed in Plan mode whose mode is over by `upto`."""
    out: list[str] = []
    current_mode = log.mode_at(upto)
    for seq, message in log.messages(last=upto):
        if not _typed(message) or log.mode_at(seq) != "plan":
            continue
        over = current_mode != "plan" or any(
            m.origin == "mode_switch" for s, m in log.messages(seq, upto)
        )
        if over:
            sentences = re.split(r"(?<=[.!?])\s+", _norm(message.text()))
            out += [_head(s, 40) for s in sentences if _CONSTRAINT.search(s)]
    return out


# --- replays -----------------------------------------------------------------------------------


SummarizerMaker = Callable[[Session], Summarizer | None]


def replay_probes(
    payloads: Iterable[EventData], policy: CompactionPolicy, make: SummarizerMaker, workdir: Path
) -> list[dict[str, bool]]:
    """Replay payloads into a fresh session, compacting when due; probe every compaction."""
    verdicts: list[dict[str, bool]] = []
    log = LogSoFar()
    with Session(workdir / "replay.jsonl", sync="batch") as session, session.batch():
        summarizer = make(session)
        for data in payloads:
            if isinstance(data, CheckpointData):
                previous = session.context.checkpoint
                first = previous.last_seq + 1 if previous else 1
                if session.applied_seq < first:
                    continue
                data = data.model_copy(update={"first_seq": first, "last_seq": session.applied_seq})
            log.events.append(session.append(data))
            try:
                result = maybe_compact(session, policy, summarizer=summarizer)
            except CompactionError:
                continue
            if result is not None and result.event is not None:
                log.events.append(result.event)
                verdicts.append(probe(log, result, session.context.messages))
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


def run_quality(
    *,
    window: int = 32_000,
    sessions: Sequence[tuple[int, int]] = DEFAULT_SESSIONS,
    transcripts_dir: Path = DEFAULT_TRANSCRIPTS,
    summarizers: Sequence[str] = SUMMARIZERS,
    max_transcripts: int | None = None,
) -> dict[str, Any]:
    """Probe every compaction of the generated and real corpora, per summarizer.

    `max_transcripts` reads only the first N real transcripts (a quick run reads one).
    """
    policy = CompactionPolicy(window_tokens=window)
    real = transcripts(transcripts_dir)[:max_transcripts]
    corpora: dict[str, list[tuple[str, Callable[[], Iterable[EventData]]]]] = {
        "generated": [
            (f"generated t{turns} s{seed}", partial(generate, turns, seed))
            for turns, seed in sessions
        ],
        "real": [(p.name, partial(_imported, p)) for p in real],
    }
    out: dict[str, Any] = {
        "window": window,
        "sessions": [list(s) for s in sessions],
        "transcripts": [p.name for p in real],
        "scores": {},
    }
    with StubModel([stand_in_answer]) as stub, tempfile.TemporaryDirectory() as tmp:
        makers: dict[str, SummarizerMaker] = {
            "extractive": lambda session: None,
            "openai": _openai_maker(stub),
        }
        for name in summarizers:
            out["scores"][name] = {}
            for corpus, runs in corpora.items():
                tally = Tally()
                for i, (where, events) in enumerate(runs):
                    work = Path(tmp) / f"{name}-{corpus}-{i}"
                    work.mkdir()
                    try:
                        stream = events()
                    except TranscriptError as exc:  # a format this toolkit cannot read yet
                        tally.skipped.append(f"{where}: {exc}")
                        continue
                    tally.add(where, replay_probes(stream, policy, makers[name], work))
                out["scores"][name][corpus] = tally.as_json()
    return out


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def markdown(results: Mapping[str, Any]) -> list[str]:
    """The report's table: score per summarizer and corpus, then per probe."""
    generated = ", ".join(f"{t} turns seed {s}" for t, s in results["sessions"])
    lines = [
        f"Window {results['window']:,} tokens; generated sessions: {generated}; real: "
        f"{_plural(len(results['transcripts']), 'transcript')} of ../shared/transcripts. A cell is "
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
    parser = argparse.ArgumentParser(prog="python -m benchmarks.checkpoint_quality")
    parser.add_argument("--window", type=int, default=32_000)

    parser.add_argument("--transcripts", type=Path, default=DEFAULT_TRANSCRIPTS)
    parser.add_argument("--summarizers", nargs="+", choices=SUMMARIZERS, default=SUMMARIZERS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    results = run_quality(
        window=args.window,
        transcripts_dir=args.transcripts,
        summarizers=args.summarizers,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    sys.stdout.write("\n".join(markdown(results)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
