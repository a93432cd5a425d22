"""The model requests a log records with their send times, and the context each one carried.

A host records each agent request's usage with when it was sent (`Session.report_usage(...,
at=...)`: a `usage/report` of purpose ``turn`` with ``at``). Replaying those times lets a
restarted host rebuild the decisions a time-driven policy (cache-aware clearing) took live.

The rule for a request's context, in one place (`recorded_requests`): the context view through
the report's ``context_seq``; without one, through the event before the newest assistant
message preceding the report (the host appended the answer, then its usage). A report before
any assistant message, without ``context_seq``, covers the events before it.

Invariants: requests come in log order of their reports; `contexts_at` yields, for each one, the
context view folded through exactly its ``context_seq``, the same on every replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from compaction.events import Event, MessageAdded, UsageReported
from compaction.views.context import ContextProjection, ContextWindow


class EventSource(Protocol):
    """What can be read from the start more than once (a `Session`)."""

    def events(self) -> Iterable[Event]:
        """Return the log's events, oldest first."""
        ...


@dataclass(frozen=True)
class RecordedRequest:
    """One agent request the log records with its send time."""

    at: float
    """When it was sent, in seconds on the host's clock."""
    context_seq: int
    """The log's last seq its context covered."""
    report_seq: int
    """The seq of its `usage/report`."""


def recorded_requests(events: Iterable[Event]) -> list[RecordedRequest]:
    """Return the agent requests (`usage/report`, purpose ``turn``, with ``at``), in log order."""
    out: list[RecordedRequest] = []
    previous = 0
    before_answer: int | None = None
    for event in events:
        if isinstance(event, MessageAdded) and event.data.role == "assistant":
            before_answer = previous
        elif isinstance(event, UsageReported) and event.data.purpose == "turn":
            d = event.data
            if d.at is not None:
                seq = d.context_seq
                if seq is None:
                    seq = previous if before_answer is None else before_answer
                out.append(RecordedRequest(at=d.at, context_seq=seq, report_seq=event.seq))
        previous = event.seq
    return out


def contexts_at(
    source: EventSource, requests: Iterable[RecordedRequest]
) -> Iterator[tuple[RecordedRequest, ContextWindow]]:
    """Yield each request with the context view through its ``context_seq``.

    Requests are taken in order of ``context_seq`` (stable: log order among equals), so one pass
    over the log serves them all.
    """
    pending = sorted(requests, key=lambda r: r.context_seq)
    projection = ContextProjection()
    state = projection.init()
    i = 0
    for event in source.events():
        while i < len(pending) and pending[i].context_seq < event.seq:
            yield pending[i], projection.view(state)
            i += 1
        state = projection.apply(state, event)
    for request in pending[i:]:
        yield request, projection.view(state)
