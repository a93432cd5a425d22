"""The projection protocol: a view over the log as a pure init/apply/view fold.

A projection is a pure unit: `init()` gives an empty state, `apply(state, event)` returns the next
state (the same state when the event is not its concern), `view(state)` shows it. `fold()`
replays any iterable of events through one projection. Each `apply` is O(1) in the log's length,
so a live session updates its views as it appends; any view can be rebuilt from the log alone.

Invariants: replaying the same events gives byte-identical views.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Generic, Protocol, TypeVar

from compaction.events import (
    Event,
)

S = TypeVar("S")
V_co = TypeVar("V_co", covariant=True)


class Projection(Protocol, Generic[S, V_co]):
    """A view over the log, as a fold."""

    name: ClassVar[str]
    state_version: ClassVar[int]
    """Bumped whenever the state's shape or meaning changes, so cached states are rebuilt."""

    def init(self) -> S:
        """Return the state before any event."""
        ...

    def apply(self, state: S, event: Event) -> S:
        """Return the state after `event`; the same state when the event is not this view's."""
        ...

    def view(self, state: S) -> V_co:
        """Return what a reader sees of `state`."""
        ...


def fold(projection: Projection[S, V_co], events: Iterable[Event]) -> V_co:
    """Replay `events` through `projection` and return its view."""
    state = projection.init()
    for event in events:
        state = projection.apply(state, event)
    return projection.view(state)
