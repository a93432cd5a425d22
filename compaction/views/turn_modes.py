"""Turn modes: which mode each stretch of the log ran in, for rules that end with a mode.

A ``turn/start`` sets the mode (its `TurnStartData.mode`, None when unknown); a message of
origin ``mode_switch`` ends it (the new mode is the message's text, not a name the log keeps,
so the mode after it reads None). Compaction uses it to drop a constraint typed in a transient
mode (Plan mode's "do not edit files yet") once that mode is over. It also keeps the working
directory each ``turn/start`` recorded (`TurnStartData.cwd`), for Files and Code.

Invariants: the view is a pure fold of the log; changes are kept in seq order.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from compaction.events import Event, MessageAdded, TurnStarted


@dataclass
class TurnModes:
    """The mode changes of a log: the seq each change took effect at, and the new mode."""

    seqs: list[int] = field(default_factory=list)
    modes: list[str | None] = field(default_factory=list)
    cwd_seqs: list[int] = field(default_factory=list)
    """Seqs of the ``turn/start`` events that recorded a working directory."""
    cwds: list[str] = field(default_factory=list)
    """The working directory each of those turns recorded, aligned with `cwd_seqs`."""

    def cwd_at(self, seq: int) -> str | None:
        """Return the working directory the latest turn at or before `seq` recorded, or None."""
        i = bisect_right(self.cwd_seqs, seq)
        return self.cwds[i - 1] if i else None

    def mode_at(self, seq: int) -> str | None:
        """Return the mode in force at `seq` (None before any turn, or when unknown)."""
        i = bisect_right(self.seqs, seq)
        return self.modes[i - 1] if i else None

    def modes_of(self, seqs: Sequence[int]) -> tuple[str | None, ...]:
        """Return the mode in force at each seq."""
        return tuple(self.mode_at(s) for s in seqs)

    @property
    def mode_now(self) -> str | None:
        """Return the mode in force after the last event."""
        return self.modes[-1] if self.modes else None


class TurnModesProjection:
    """Fold the log into its mode changes (O(1) per event)."""

    name: ClassVar[str] = "turn_modes"
    state_version: ClassVar[int] = 2

    def init(self) -> TurnModes:
        """Return no changes."""
        return TurnModes()

    def apply(self, state: TurnModes, event: Event) -> TurnModes:
        """Record a turn's mode, or the end of a mode at a mode message."""
        if isinstance(event, TurnStarted):
            state.seqs.append(event.seq)
            state.modes.append(event.data.mode)
            if event.data.cwd:
                state.cwd_seqs.append(event.seq)
                state.cwds.append(event.data.cwd)
        elif isinstance(event, MessageAdded) and event.data.origin == "mode_switch":
            state.seqs.append(event.seq)
            state.modes.append(None)
        return state

    def view(self, state: TurnModes) -> TurnModes:
        """Return the changes."""
        return state
