"""The mode of an Agents SDK session's runs: a setter, a user's modes, a turn per run.

`LogSession` takes its mode from here: the mode runs work in (set it between runs to switch),
chosen among the built-in modes or a user's (`prompts.available_modes`), and the `turn/start`
each run's input opens in the log, so the log's tool policy follows the mode.

Invariants: a mode is always one of `modes`; a run's input opens exactly one turn.
"""

from __future__ import annotations

from collections.abc import Mapping

from compaction import EventData, Message, TurnStartData
from prompts import DEFAULT_MODE, Mode, get_mode


class RunModes:
    """The mode of the runs, and the turn each run's input opens.

    Args:
        mode: the mode's name (default the built-in default mode).
        modes: the modes to choose from (default: the built-in ones).

    Raises:
        ConfigError: an unknown mode.
    """

    def __init__(self, mode: str | None, modes: Mapping[str, Mode] | None) -> None:
        self.modes = modes
        self._mode = get_mode(mode or DEFAULT_MODE, modes)

    @property
    def mode(self) -> Mode:
        """The mode runs work in: set it to a mode's name between runs to switch.

        The next run's input opens a turn in the new mode, whose tool policy the tools follow.

        Raises:
            ConfigError: an unknown mode (on setting).
        """
        return self._mode

    @mode.setter
    def mode(self, name: str) -> None:
        self._mode = get_mode(name, self.modes)

    def open_turn(self, messages: list[EventData]) -> None:
        """Insert a `turn/start` in the current mode before the first user message, if any."""
        first = next(
            (i for i, m in enumerate(messages) if isinstance(m, Message) and m.role == "user"),
            None,
        )
        if first is not None:
            messages.insert(first, TurnStartData(mode=self.mode.name))


__all__ = ["RunModes"]
