"""The phases the throughput benchmark times: append into a store, reopen, a raw tiktoken pass.

Each phase is what a live session does, in the store under test (`opener`): `append_all`
appends in batches of `BATCH` and folds the usage view; `reopen_count` reads a log back into a new
`Session` counting with a fresh tokenizer (as a new process would); `raw_pass` is the floor every
cost is a ratio to, tiktoken over each text once with no memo.

Invariants: each phase runs on the session or log it is given and keeps nothing between calls.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import NamedTuple, TypeVar

from compaction import EventData, Session, Tokenizer, open_store
from compaction.tokens import TiktokenTokenizer

T = TypeVar("T")

BATCH = 1_000
"""Events appended per locked write (and per fsync)."""
MIN_TIMED_EVENTS = 10_000
"""Below this many events a size's append is timed over several rounds (`rounds_for`)."""
MAX_ROUNDS = 10


Opener = Callable[[str, Tokenizer], Session]
"""Open (or create) the named session in the store under test, counting with the tokenizer."""


def store_url(store: str, folder: Path, stack: ExitStack) -> str:
    """Return the URL of a new `store` ("jsonl", "sqlite", "postgres") kept in `folder`.

    PostgreSQL's is a throwaway server (fsync on), started in `stack` and stopped with it.
    """
    if store == "jsonl":
        return f"jsonl:///{folder / 'jsonl'}"
    if store == "sqlite":
        return f"sqlite:///{folder / 'sessions.db'}"
    from harness.testing import running_postgres

    url: str = stack.enter_context(running_postgres(durable=True)).url
    return url


@contextmanager
def opener(store: str, folder: Path) -> Iterator[Opener]:
    """Yield a function that opens a named session in `store`, kept in `folder`."""
    with ExitStack() as stack:
        if store == "jsonl":
            yield lambda name, tok: Session(folder / f"{name}.jsonl", tokenizer=tok, sync="batch")
            return
        db = open_store(store_url(store, folder, stack), sync="batch")
        stack.callback(db.close)
        yield lambda name, tok: Session(store=db, session=name, tokenizer=tok)


def append_all(
    path: Path, events: Sequence[EventData], tokenizer: Tokenizer, open_: Opener | None = None
) -> Session:
    """Append `events` to a new session (at `path`, or `open_(path.stem)`) in batches.

    The usage view is folded before returning (a `Session` counts tokens on first use), so the
    time includes tokenizing each message once and a later `context_tokens` read is O(1).
    """
    session = (
        open_(path.stem, tokenizer) if open_ else Session(path, tokenizer=tokenizer, sync="batch")
    )
    for i in range(0, len(events), BATCH):
        with session.batch():
            session.append_many(events[i : i + BATCH])
    _ = session.context_tokens
    return session


def rounds_for(n: int, min_timed: int = MIN_TIMED_EVENTS) -> int:
    """Return how many rounds the append of `n` events is timed over.

    Enough for `min_timed` events in all (at most `MAX_ROUNDS`): one round of 10^3 events
    takes about a third of a CPU second on each side of the ratio, where a loaded machine's
    noise moves a single pass by a quarter; summed over rounds, the noise averages out.
    """
    return max(1, min(MAX_ROUNDS, -(-min_timed // n))) if n else 1


class Timed(NamedTuple):
    """The append of one size timed over `rounds`, beside the raw passes around each round."""

    session: Session
    """The last round's session, open (its log is the one named ``timed``)."""
    tokens: int
    append_s: float
    """CPU seconds of one round (the mean over the rounds)."""
    append_wall: float
    raw_s: float
    """CPU seconds of one raw tiktoken pass (the mean of the passes before and after each
    round)."""
    rounds: int


def timed_append(
    folder: Path, events: Sequence[EventData], texts: Sequence[str], open_: Opener, rounds: int
) -> Timed:
    """Time `rounds` appends of `events` (raw, append, raw, append, ..., raw), each fresh.

    Each round appends to a new log with a fresh tokenizer, so no round's counts are memo hits
    of an earlier one; only the last round's session (``timed``) is kept and returned.
    """
    rounds = max(1, rounds)
    tok = fresh_tokenizer()
    tokens, raw_s = timed_call(partial(raw_pass, tok, texts))[:2]
    append_s = append_wall = 0.0
    for k in range(rounds):
        last = k == rounds - 1
        log = folder / ("timed.jsonl" if last else f"round-{k}.jsonl")
        session, cpu, wall = timed_call(partial(append_all, log, events, tok, open_))
        append_s, append_wall = append_s + cpu, append_wall + wall
        raw_s += timed_call(partial(raw_pass, tok, texts))[1]
        if not last:
            session.close()
            log.unlink(missing_ok=True)
            tok = fresh_tokenizer()
    per = (append_s / rounds, append_wall / rounds, raw_s / (rounds + 1))
    return Timed(session, tokens, *per, rounds)


def timed_call(fn: Callable[[], T]) -> tuple[T, float, float]:
    """Run `fn`; return its result, its CPU seconds and its wall seconds."""
    wall, start = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - start, time.perf_counter() - wall


def fresh_tokenizer() -> Tokenizer:
    """Return the default tokenizer with an empty count memo (as a new process has)."""
    return TiktokenTokenizer()


def reopen_count(open_: Opener, name: str) -> int:
    """Read the session back into a new `Session` and fold every view, token counts included.

    The new session counts with a fresh tokenizer: a reopen in a new process remembers no count.
    """
    with open_(name, fresh_tokenizer()) as again:
        return again.context_tokens


def raw_pass(tok: Tokenizer, texts: Sequence[str]) -> int:
    """Tokenize every text once with the raw encoder (no memo): the floor of token accounting."""
    return sum(len(tok.encode(t)) for t in texts)
