"""Tool policies by mode: which tools a turn's mode forbids, and what a refused call returns.

The session enforces the mode of the current turn (the ``mode`` of the latest `turn/start`) with
a *policy table*: plain data, a mapping from mode name to `ModePolicy`. `compaction` never
imports `prompts`; `prompts.policy_table(modes)` builds the table from its modes (rendering each
refusal from the mode's templates) and a host hands it to `Session(policies=...)`. Without one,
the session uses `builtin_policies()`: the table of the built-in modes, shipped as the generated
file ``compaction/schemas/mode_policies.json`` (a test checks it equals what `prompts` builds;
regenerate it with ``harness modes --policies > compaction/schemas/mode_policies.json``).

A mode missing from the table (a turn with no mode, or a user mode the table does not know)
gets `DEFAULT_POLICY`: every tool allowed, one todo in progress.

Invariants: a tool the turn's policy forbids is never executed and appends nothing; the policy
is read from the log (the latest `turn/start`), so a host cannot forget to ask.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from compaction.contract import (
    TASK_CREATE,
    TASK_CREATE_EVENT,
    TASK_UPDATE,
    TASK_UPDATE_EVENT,
    TODO_WRITE,
    TODO_WRITE_EVENT,
)
from compaction.errors import ConfigError
from compaction.events import Event, TurnStarted
from compaction.tools._plain_call import POLICY_FILE, policy_text

PolicyTable = Mapping[str, "ModePolicy"]
"""Mode name -> its tool policy."""


class ModePolicy(BaseModel):
    """What one mode allows: the tools it refuses (with their refusal texts) and the todo rule."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    refusals: dict[str, str] = Field(default_factory=dict)
    """Forbidden tool name -> the model-facing result a call to it gets (``is_error``)."""
    allow_parallel_in_progress: bool = False
    """Several todo items may be `in_progress` at once in this mode."""

    def refusal(self, tool: str) -> str | None:
        """Return the refusal of a call to `tool`, or None when the mode allows it."""
        return self.refusals.get(tool)

    def forbids(self, tool: str) -> bool:
        """Tell whether the mode forbids `tool`."""
        return tool in self.refusals


DEFAULT_POLICY: Final = ModePolicy()
"""The policy of a mode the table does not know: everything allowed, one todo in progress."""


def policy_for(table: PolicyTable, mode: str | None) -> ModePolicy:
    """Return the policy of `mode` in `table` (`DEFAULT_POLICY` when absent or None)."""
    if mode is None:
        return DEFAULT_POLICY
    return table.get(mode, DEFAULT_POLICY)


def dump_policies(table: PolicyTable) -> str:
    """Serialize a policy table as canonical JSON (sorted keys, two-space indent, newline)."""
    data = {name: table[name].model_dump() for name in sorted(table)}
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load_policies(text: str, *, source: str = "policy table") -> dict[str, ModePolicy]:
    """Read a policy table written by `dump_policies`.

    Raises:
        ConfigError: the text is not a JSON object of mode policies; names `source`.
    """
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{source}: not valid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected an object of mode name -> policy")
    table: dict[str, ModePolicy] = {}
    for name, value in raw.items():
        try:
            table[str(name)] = ModePolicy.model_validate(value)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"]) or "policy"
            raise ConfigError(f"{source}: mode {name!r}: {where}: {first['msg']}") from None
    return table


@cache
def builtin_policies() -> PolicyTable:
    """Return the policy table of the built-in modes (agent, parallel, plan, team), read-only."""
    text = policy_text()
    return MappingProxyType(load_policies(text, source=f"compaction/schemas/{POLICY_FILE}"))


EVENT_TOOLS: Final[dict[str, str]] = {
    TODO_WRITE_EVENT: TODO_WRITE,
    TASK_CREATE_EVENT: TASK_CREATE,
    TASK_UPDATE_EVENT: TASK_UPDATE,
}
"""The tool whose accepted call each tool event records."""


@dataclass(frozen=True)
class PolicyWarning:
    """A recorded tool event inside a turn whose mode forbids that tool (imported history)."""

    seq: int
    """Seq of the tool event."""
    event: str
    """Its type, e.g. ``todo/write``."""
    tool: str
    """The tool it records, e.g. ``todo_write``."""
    mode: str
    """The turn's mode."""
    turn_seq: int
    """Seq of the `turn/start` that set the mode."""

    def __str__(self) -> str:
        return (
            f"seq {self.seq}: {self.event} in a {self.mode} turn (turn/start at seq "
            f"{self.turn_seq}), whose mode forbids {self.tool}"
        )


class PolicyChecker:
    """Finds tool events recorded in turns whose mode forbids the tool, in one streaming pass.

    Not a log invariant: a log that breaks today's policy (imported history, a host that did
    not enforce it) is still a valid log, so these are warnings.

    Args:
        table: the policy table to check against (default: the built-in modes').
    """

    def __init__(self, table: PolicyTable | None = None) -> None:
        self.table = builtin_policies() if table is None else table
        self._mode: str | None = None
        self._turn_seq = 0

    def feed(self, event: Event) -> PolicyWarning | None:
        """Follow the turn's mode; return a warning for a forbidden tool event."""
        if isinstance(event, TurnStarted):
            self._mode, self._turn_seq = event.data.mode, event.seq
            return None
        tool = EVENT_TOOLS.get(event.type)
        if tool is None or self._mode is None:
            return None
        if not policy_for(self.table, self._mode).forbids(tool):
            return None
        return PolicyWarning(event.seq, event.type, tool, self._mode, self._turn_seq)
