"""Attack classes of issue 39: a crash inside a tool call, provider refusals, what append takes.

Each function runs ``kit.cases`` generated cases of one class and counts what went wrong on its
`Tally` (see `benchmarks.attacks.attack_table`):

- ``killed-tool-call``: the log a process killed inside 1-4 parallel tool calls leaves (some
  results written, some not), then a resume by `harness context` (three formats), by a new
  turn, or by `compacting_call`: every request must pair each call with a result (the providers'
  rule, `harness.testing.unanswered_ids`), and each placeholder is recorded once;
- ``overflow-refusals``: provider refusals with and without a 400-class status, hostile errors
  (``str()`` or attributes that raise), hostile usage objects: no escape, the right verdict, an
  answered call kept, exactly two sends after a double refusal;
- ``append-inputs``: lone surrogates in ``--instructions`` and ``compact_context``'s focus,
  usage figures of thousands of digits, forged checkpoint spans: refused in one line, the log
  byte-identical and still readable;
- ``compact-context-floor``: ``compact_context`` called again and again: one Checkpoint per
  floor of new content, not one per call.

Invariants: seeded per class; every case runs in its own folder; nothing reaches the network.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.attacks.attack_kit import Kit, Tally, check_bytes, read_or_empty
from compaction import (
    CheckpointData,
    CompactionPolicy,
    HarnessError,
    Message,
    MessageAdded,
    RequestOverflowError,
    Session,
    UsageReportData,
    call_tool,
    compacting_call,
    is_context_overflow,
)
from compaction.views import interrupted_text
from harness.testing import unanswered_ids
from prompts import PromptBuilder, get_mode, openai_request

FORMATS = ("openai", "anthropic", "responses")


def _killed_log(kit: Kit) -> tuple[Path, int]:
    """A log as a process killed inside its tool calls leaves it; the number left open."""
    log = kit.folder() / "s.jsonl"
    calls = kit.rng.randint(1, 4)
    answered = kit.rng.randint(0, calls - 1)
    with Session(log) as session:
        session.start_turn("Read the files")
        for k in range(kit.rng.randint(0, 2)):  # earlier, whole steps
            call = {"id": f"w{k}", "type": "function",
                    "function": {"name": "read_file", "arguments": "{}"}}  # fmt: skip
            session.add_message({"role": "assistant", "content": None, "tool_calls": [call]})
            session.add_message({"role": "tool", "tool_call_id": f"w{k}", "content": "ok"})
        tool_calls = [
            {
                "id": f"k{k}",
                "type": "function",
                "function": {"name": "read_file", "arguments": "{}"},
            }
            for k in range(calls)
        ]
        session.add_message({"role": "assistant", "content": None, "tool_calls": tool_calls})
        for k in range(answered):
            session.add_message({"role": "tool", "tool_call_id": f"k{k}", "content": "ok"})
    return log, calls - answered


def _placeholders(log: Path) -> int:
    with Session(log) as session:
        return sum(
            isinstance(e, MessageAdded) and e.data.text() == interrupted_text()
            for e in session.events()
        )


def _resume(kit: Kit, tally: Tally, log: Path, how: str) -> list[tuple[str, dict[str, Any]]]:
    """Resume the killed session one way; return the requests it would send (api, body)."""
    if how in FORMATS:
        done = kit.cli(tally, ["context", log, "--format", how, "--max-tokens", "64"])
        return [(how, json.loads(done.stdout))] if done.code == 0 else []
    sent: list[tuple[str, dict[str, Any]]] = []
    builder, mode = PromptBuilder(), get_mode("agent")
    with Session(log) as session:
        if how == "new-turn":
            session.start_turn("Go on")
        compacting_call(
            session,
            CompactionPolicy(),
            lambda: sent.append(("openai", openai_request(builder, mode, session))),
        )
    return sent


def killed_tool_call(kit: Kit, tally: Tally) -> None:
    """A kill inside 1-4 parallel calls, then a resume: valid requests, each answer once."""
    for _ in range(kit.cases):
        log, left = _killed_log(kit)
        how = kit.rng.choice((*FORMATS, "new-turn", "compacting-call"))
        tally.cases += 1
        for attempt in range(2):  # a second resume must not answer again
            try:
                requests = _resume(kit, tally, log, how)
            except Exception as exc:  # any escape is the crash counted
                tally.fail("crashes", f"{how}: {type(exc).__name__}: {exc}")
                break
            if not requests:
                tally.fail("wrong", f"{how}: no request was built")
            for api, body in requests:
                if missing := unanswered_ids(api, body):  # type: ignore[arg-type]
                    tally.fail("wrong", f"{how} (resume {attempt + 1}): unanswered {missing}")
        if (found := _placeholders(log)) != left:
            kind = "doubled" if found > left else "wrong"
            tally.fail(kind, f"{how}: {found} placeholders for {left} open calls")


class _Status(Exception):
    def __init__(self, text: str, status: int | None) -> None:
        super().__init__(text)
        self.status_code = status


class _Hostile(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")

    @property
    def status_code(self) -> int:
        raise RuntimeError("no status")


REFUSALS = (
    "prompt is too long: 214563 tokens > 200000 maximum",
    "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease "
    "input length or `max_tokens` and try again",
    "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens",
    "Your input exceeds the context window of this model.",
    "The decoder prompt (length 17772) is longer than the maximum model length of 16384.",
    "Input is too long for requested model.",
)
NOT_REFUSALS = ("tool input is too long", "rate limit reached", "bad tool schema")


def _verdicts(kit: Kit, tally: Tally) -> None:
    """One error object: recognised exactly when a 400-class status carries a refusal."""
    text = kit.rng.choice(REFUSALS + NOT_REFUSALS)
    status = kit.rng.choice((None, 400, 413, 429, 500))
    error: Exception = kit.rng.choice((_Status(text, status), _Hostile()))
    want = isinstance(error, _Status) and text in REFUSALS and status in (400, 413)
    try:
        got = is_context_overflow(error)
    except Exception as exc:
        tally.fail("crashes", f"is_context_overflow({text!r}, {status}): {exc!r}")
        return
    if got != want:
        tally.fail("wrong", f"{text!r} with status {status}: overflow={got}")


class _Answer:
    def __init__(self, usage: object) -> None:
        self.usage, self.model = usage, "m"


class _BadUsage:
    @property
    def prompt_tokens(self) -> int:
        raise RuntimeError("no usage")


def _calls(kit: Kit, tally: Tally, log: Path) -> None:
    """A double refusal sends twice; a hostile usage object never loses the answer."""
    usage = kit.rng.choice(
        (_BadUsage(), {"prompt_tokens": -kit.rng.randint(1, 99)}, {"prompt_tokens": 10**5000})
    )
    sends: list[int] = []

    def refused() -> None:
        sends.append(1)
        raise _Status(kit.rng.choice(REFUSALS), 400)

    with Session(log) as session:
        session.start_turn("go")
        for i in range(30):
            session.add_message({"role": "assistant", "content": f"step {i} " + "w " * 80})
        answer = _Answer(usage)
        try:
            if compacting_call(session, CompactionPolicy(), lambda: answer) is not answer:
                tally.fail("wrong", f"{type(usage).__name__}: the answer was lost")
            compacting_call(session, CompactionPolicy(200_000), refused)
            tally.fail("wrong", "a double refusal did not raise")
        except RequestOverflowError:
            if len(sends) != 2:
                tally.fail("wrong", f"a double refusal sent {len(sends)} times")
        except Exception as exc:
            tally.fail("crashes", f"compacting_call: {type(exc).__name__}: {exc}")
    with Session(log):  # every later open reads the log
        pass


def overflow_refusals(kit: Kit, tally: Tally) -> None:
    """Refusals and hostile objects against the recogniser and `compacting_call`."""
    for i in range(kit.cases):
        tally.cases += 1
        _verdicts(kit, tally)
        if i % 3 == 0:
            _calls(kit, tally, kit.folder() / "s.jsonl")


def _span(first: int, last: int) -> CheckpointData:
    return CheckpointData(
        text="# Checkpoint", first_seq=first, last_seq=last, tokens_before=1, tokens_after=1,
        summarizer="extractive",
    )  # fmt: skip


def _api_input(kit: Kit, log: Path) -> str:
    """One hostile input through the API; returns what it was (raises when refused)."""
    with Session(log) as session:
        end, back = session.applied_seq, session.context.checkpoint
        what = kit.rng.choice(("span-beyond", "span-reversed", "span-back", "huge", "focus"))
        if what == "span-back" and back is None:
            what = "span-reversed"
        if what == "span-beyond":
            session.append(_span(1, end + kit.rng.randint(1, 50)))
        elif what == "span-reversed":
            session.append(_span(end, max(1, end - kit.rng.randint(1, 5))))
        elif what == "span-back" and back is not None:
            session.append(_span(1, kit.rng.randint(1, back.last_seq)))
        elif what == "huge":
            data = {"purpose": "turn", "model": "m", "completion_tokens": 1}
            session.report_usage(UsageReportData(**data, prompt_tokens=10 ** (4301 + end)))
        else:
            result = call_tool(session, "compact_context", {"focus": "keep \udc80 this"})
            if not result.is_error:
                raise AssertionError("a focus with a lone surrogate was accepted")
            raise HarnessError(result.content)
    return what


def append_inputs(kit: Kit, tally: Tally) -> None:
    """Inputs no log line can hold, or forged: refused, the log unchanged and readable."""
    for i in range(kit.cases):
        log = kit.folder() / "s.jsonl"
        with Session(log) as session:
            session.start_turn("work")
            for k in range(6):
                session.add_message({"role": "assistant", "content": f"step {k} " + "w " * 60})
            if i % 4 == 0:
                session.append(_span(1, 2))  # an earlier checkpoint to go back before
        before = read_or_empty(log)
        tally.cases += 1
        if i % 2 == 0:
            bad = chr(kit.rng.randint(0xDC80, 0xDCFF))  # a byte argv could not decode
            done = kit.cli(tally, ["compact", log, "--force", "--instructions", f"keep {bad}"])
            if done.code != 2 or len(done.stderr.splitlines()) != 1:
                tally.fail("wrong", f"--instructions with {bad!r}: exit {done.code}")
        else:
            try:
                what = _api_input(kit, log)
                tally.fail("wrong", f"{what}: accepted")
            except (HarnessError, ValueError):
                pass  # refused, as it must be (pydantic's ValidationError is a ValueError)
            except Exception as exc:
                tally.fail("crashes", f"{type(exc).__name__}: {exc}")
        check_bytes(tally, f"case {i}", before, read_or_empty(log), appended=False)
        with Session(log) as again:
            if again.applied_seq == 0:
                tally.fail("lost", f"case {i}: the log no longer reads")


def compact_context_floor(kit: Kit, tally: Tally) -> None:
    """`compact_context` N times in a row: one Checkpoint, not N."""
    for _ in range(max(1, kit.cases // 2)):
        log = kit.folder() / "s.jsonl"
        calls = kit.rng.randint(3, 12)
        tally.cases += 1
        with Session(log) as session:
            session.start_turn("work through it")
            for k in range(30):
                session.add_message({"role": "assistant", "content": f"step {k} " + "w " * 60})
            for k in range(calls):
                call = {"id": f"cc{k}", "type": "function",
                        "function": {"name": "compact_context", "arguments": "{}"}}  # fmt: skip
                session.add_message({"role": "assistant", "content": None, "tool_calls": [call]})
                out = call_tool(session, "compact_context", "{}", policy=CompactionPolicy(8_000))
                session.add_message(
                    Message(role="tool", tool_call_id=f"cc{k}", content=out.content)
                )
            made = sum(e.type == "compaction/checkpoint" for e in session.events())
        if made != 1:
            tally.fail("wrong", f"{calls} calls in a row made {made} Checkpoints")


__all__ = ["append_inputs", "compact_context_floor", "killed_tool_call", "overflow_refusals"]
