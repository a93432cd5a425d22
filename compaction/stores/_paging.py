"""Reading a session from a database store a page of rows at a time.

Both SQL stores keep each event's JSON line in a row keyed by (session, seq); `paged_events`
is their one reader: it asks the store for the next page after the last seq it yielded, parses
each row as the log's own reader would, and names the session and seq of a row that is not an
event.

Invariant: at most one page of rows is held at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Final

from compaction.errors import LogFormatError
from compaction.events import Event
from compaction.stores.log_reader import error_reason, parse_line

PAGE: Final = 1000
"""Rows fetched per query."""

ROW_FIX: Final = (
    "A database row is never skipped: correct that row, or restore the store from a backup."
)
"""The end of a damaged row's message (the log's "skip it" advice would not help here)."""

Rows = Sequence[tuple[int, bytes | str]]
"""(seq, body) rows of one page, in seq order; a body is the line's UTF-8 bytes (or its text)."""


def paged_events(fetch: Callable[[int], Rows], where: str, *, after: int = 0) -> Iterator[Event]:
    """Yield the events of the pages `fetch(after)` returns, each page after the last seq read.

    Args:
        fetch: returns up to `PAGE` rows with seqs above its argument, in seq order.
        where: names the session in errors (the store and the session id).
        after: the seq to start after.

    Raises:
        LogFormatError: a row's body is not an event (naming its seq as the line, and
            advising no skip: `skip_bad_lines` applies to JSONL logs only).
    """
    while True:
        rows = fetch(after)
        for seq, body in rows:
            try:
                yield parse_line(body)
            except ValueError as exc:
                raise LogFormatError(where, seq, error_reason(exc), fix=ROW_FIX) from None
            after = seq
        if len(rows) < PAGE:
            return
        rows = []  # let the page go before the next one is fetched
