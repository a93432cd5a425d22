"""The phases the throughput benchmark times: append into a store, reopen, a raw tiktoken pass.

Each phase is what a live session does, in the store under test (`opener`): `append_all`
appends in batches of `BATCH` and folds the usage view; `_reopen` reads a log back into a new
`Session` counting with a fresh tokenizer (as a new process would); `_raw` is the floor every
cost is a ratio to, tiktoken over each text once with no memo.

Invariants: each phase runs on the session or log it is given and keeps nothing between calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from compaction import EventData, Session, Tokenizer, open_store
from compaction.tokens import TiktokenTokenizer

BATCH = 1_000
"""Events appended per locked write (and per fsync)."""


Opener = Callable[[str, Tokenizer], Session]
"""Open (or create) the named session in the store under test, counting with the tokenizer."""


@contextmanager
def opener(store: str, folder: Path) -> Iterator[Opener]:
    """Yield a function that opens a named session in `store`, kept in `folder`."""
    with ExitStack() as stack:
        if store == "jsonl":
            yield lambda name, tok: Session(folder / f"{name}.jsonl", tokenizer=tok, sync="batch")
            return
        if store == "sqlite":
            url = f"sqlite:///{folder / 'sessions.db'}"
        else:
            from benchmarks import pgserver

            url = stack.enter_context(pgserver.running(durable=True)).url
        db = open_store(url, sync="batch")
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


def fresh_tokenizer() -> Tokenizer:
    """Return the default tokenizer with an empty count memo (as a new process has)."""
    return TiktokenTokenizer()


def _reopen(open_: Opener, name: str) -> int:
    """Read the session back into a new `Session` and fold every view, token counts included.

    The new session counts with a fresh tokenizer: a reopen in a new process remembers no count.
    """
    with open_(name, fresh_tokenizer()) as again:
        return again.context_tokens


def _raw(tok: Tokenizer, texts: Sequence[str]) -> int:
    """Tokenize every text once with the raw encoder (no memo): the floor of token accounting."""
    return sum(len(tok.encode(t)) for t in texts)
