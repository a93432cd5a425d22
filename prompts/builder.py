"""The prompt builder: a mode's system prompt and tool catalog, laid out for the prefix cache.

Layout, from most stable to least: core block -> tool catalog -> mode block -> environment block
(then, in a request, the checkpoint and the messages). The core block and the user's tools are
the same in every mode; `todo_write` closes the catalog because its description carries the
mode's in-progress rule; the mode block follows the catalog, and the environment (date, working
directory, user variables: per session) comes last.

Tool strategies, for the tools a mode forbids: ``stable`` keeps the catalog byte-identical across
modes (the prompt forbids the tool and code refuses a call: see `run_todo_write`); ``filtered``
removes them from the catalog.

A mode switch in mid-session can either rebuild the system prompt for the new mode, or leave the
prompt alone and append a mode message to the conversation, so that every byte of the earlier
request stays a prefix of the next one (`switch_mode`).

Invariants: rendering is a pure function of the builder and the mode (no clock, no unordered
iteration); a forbidden `todo_write` appends nothing to the log.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from compaction import TOOL_NAME, Message, Session, ToolResult, todo_write
from prompts.catalog import ToolCatalog, ToolSpec
from prompts.modes import Mode, ToolStrategy
from prompts.rendering import render

SwitchStrategy = Literal["rebuild", "message"]
"""How a mode switch in mid-session reaches the model: a new system prompt, or a message."""

SWITCH_STRATEGIES: tuple[SwitchStrategy, ...] = ("rebuild", "message")
_VARIABLE_NAME = r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$"


class Environment(BaseModel):
    """What the environment block tells the model: date, working directory, user variables.

    Fix it once per session: it sits in the system prompt, so changing it mid-session (a clock
    that ticks past midnight) would invalidate the cached prefix from there on.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    date: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    """The session's date, ``YYYY-MM-DD``; omitted when None."""
    cwd: str | None = None
    """The working directory; omitted when None."""
    variables: tuple[tuple[str, str], ...] = ()
    """User variables as (name, value) pairs, sorted by name (a mapping is accepted)."""

    @field_validator("variables", mode="before")
    @classmethod
    def _sort_variables(cls, value: object) -> object:
        pairs = value.items() if isinstance(value, Mapping) else value
        if isinstance(pairs, str) or not isinstance(pairs, Iterable):
            return pairs
        return tuple(sorted((str(k), str(v)) for k, v in pairs))

    @field_validator("variables")
    @classmethod
    def _check_names(cls, value: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        names = [name for name, _ in value]
        for name in names:
            if not re.match(_VARIABLE_NAME, name):
                raise ValueError(f"variable name {name!r} must match {_VARIABLE_NAME}")
        if len(set(names)) != len(names):
            raise ValueError("variable names must be unique")
        return value


class PromptLayers(BaseModel):
    """The layers of one mode's prompt, in layout order."""

    model_config = ConfigDict(frozen=True)

    core: str
    """Identity and how to work: the same in every mode."""
    tools: tuple[ToolSpec, ...]
    """The tool catalog: the user's tools by name, then `todo_write` (unless filtered out)."""
    mode: str
    """The mode block."""
    environment: str
    """The environment block ("" when there is nothing to tell)."""

    def system_blocks(self) -> tuple[str, ...]:
        """Return the non-empty text blocks of the system prompt: core, mode, environment."""
        return tuple(b for b in (self.core, self.mode, self.environment) if b)

    @property
    def system_prompt(self) -> str:
        """Return the system prompt text: the blocks separated by blank lines."""
        return "\n\n".join(self.system_blocks())


class PromptBuilder:
    """Builds a mode's prompt layers from a tool catalog, a tool strategy and an environment.

    Args:
        catalog: the user's tools (default: none besides `todo_write`).
        strategy: how forbidden tools are presented; None follows each mode's tool policy.
        environment: the per-session values of the environment block.
    """

    def __init__(
        self,
        catalog: ToolCatalog | None = None,
        *,
        strategy: ToolStrategy | None = None,
        environment: Environment | None = None,
    ) -> None:
        self.catalog = catalog or ToolCatalog()
        self.strategy = strategy
        self.environment = environment or Environment()

    def tool_strategy(self, mode: Mode) -> ToolStrategy:
        """Return the strategy used for `mode`: the builder's, else the mode's own."""
        return self.strategy or mode.tools.strategy

    def tools(self, mode: Mode) -> tuple[ToolSpec, ...]:
        """Return the tool catalog of `mode` under the tool strategy."""
        allow_parallel = mode.todo.allow_parallel_in_progress
        if self.tool_strategy(mode) == "stable":
            return self.catalog.tools(allow_parallel_in_progress=allow_parallel)
        return self.catalog.tools(
            allow_parallel_in_progress=allow_parallel,
            include_todo_write=mode.todo_write_allowed,
            exclude=mode.tools.forbidden,
        )

    def mode_block(self, mode: Mode, tools: tuple[ToolSpec, ...] | None = None) -> str:
        """Return the mode block: the mode's templates rendered in order."""
        names = tuple(t.name for t in (self.tools(mode) if tools is None else tools))
        context = {
            "mode": mode_data(mode),
            "env": self.environment.model_dump(mode="json"),
            "tool_names": names,
            "forbidden_tools": mode.tools.forbidden,
        }
        parts = [render(b, context, folder=mode.template_dir).strip("\n") for b in mode.blocks]
        return "\n\n".join(p for p in parts if p)

    def layers(self, mode: Mode) -> PromptLayers:
        """Return every layer of `mode`'s prompt."""
        tools = self.tools(mode)
        return PromptLayers(
            core=render("core.md.j2", {}).strip("\n"),
            tools=tools,
            mode=self.mode_block(mode, tools),
            environment=render(
                "environment.md.j2", {"env": self.environment.model_dump(mode="json")}
            ).strip("\n"),
        )

    def system_prompt(self, mode: Mode) -> str:
        """Return `mode`'s system prompt text."""
        return self.layers(mode).system_prompt

    def mode_message(self, mode: Mode) -> Message:
        """Return the user message (origin ``mode_switch``) switching the conversation to `mode`."""
        text = render(
            "mode_switch.md.j2", {"mode": mode_data(mode), "block": self.mode_block(mode)}
        )
        return Message(role="user", content=text.rstrip("\n"), origin="mode_switch")


def mode_data(mode: Mode) -> dict[str, Any]:
    """Return what a template sees of `mode`: its fields as plain data, without its folder."""
    return mode.model_dump(mode="json", exclude={"template_dir"})


def switch_mode(
    session: Session,
    builder: PromptBuilder,
    prompt_mode: Mode,
    new_mode: Mode,
    *,
    how: SwitchStrategy = "rebuild",
    current: Mode | None = None,
) -> Mode:
    """Switch a session to `new_mode`; return the mode to build the system prompt for from now on.

    ``rebuild``: nothing is appended; the next request's system prompt (and catalog) is
    `new_mode`'s. ``message``: the system prompt stays `prompt_mode`'s and a mode message is
    appended to the session, so the earlier request stays a byte prefix of the next one.
    `current` is the mode the agent works in now (default `prompt_mode`): with ``message``, a
    switch back to the prompt's own mode after an earlier mode message is announced too.
    Either way, run tools under `new_mode` (e.g. `run_todo_write`).
    """
    if how == "rebuild":
        return new_mode
    if new_mode == (current or prompt_mode):
        return prompt_mode
    session.add_message(builder.mode_message(new_mode))
    return prompt_mode


def refusal(mode: Mode) -> str | None:
    """Return the model-facing refusal of `todo_write` in `mode`, or None when it is allowed."""
    if mode.todo_write_allowed:
        return None
    context = {"mode": mode_data(mode)}
    return render(mode.todo.refusal, context, folder=mode.template_dir).rstrip("\n")


def tool_refusal(mode: Mode, tool: str) -> str | None:
    """Return the model-facing refusal of a call to `tool` in `mode`, or None when allowed.

    Covers `todo_write` (the todo policy) and the user tools the mode's tool policy forbids;
    an agent loop checks it before it runs any tool, whatever the tool strategy.
    """
    if tool == TOOL_NAME:
        return refusal(mode)
    if tool not in mode.tools.forbidden:
        return None
    context = {"mode": mode_data(mode), "tool": tool}
    text = render("refusals/tool.md.j2", context, folder=mode.template_dir)
    return text.rstrip("\n")


def run_todo_write(
    session: Session, arguments: str | bytes | Mapping[str, Any], mode: Mode
) -> ToolResult:
    """Run `todo_write` under `mode`: refused (nothing appended) when the mode forbids it.

    Otherwise the call is validated with the mode's in-progress rule and, when accepted, appends
    one `todo/write` event (see `compaction.todo_write`).
    """
    return todo_write(
        session,
        arguments,
        allow_parallel_in_progress=mode.todo.allow_parallel_in_progress,
        refuse=refusal(mode),
    )
