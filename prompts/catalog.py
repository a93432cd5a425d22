"""The tool catalog: the user's tools plus the built-in ones, in a deterministic order.

User tools come as OpenAI function definitions (``{"type": "function", "function": {...}}`` or
the bare ``{"name", "description", "parameters"}``), Anthropic tools (``input_schema``), or
pydantic models (name from the ``title`` in their config, else the class name in snake_case;
description from the docstring; parameters from the JSON schema). The built-in tools take their
parameter schemas from `compaction` (`parameters_schema`, `task_parameters_schema`) and their
descriptions from ``templates/tools/``. This module owns every provider tool shape: OpenAI
function tools (`ToolSpec.openai`, `openai_tool`) and Anthropic tools (`ToolSpec.anthropic`,
`anthropic_tool`).

The built-in ``compact_context`` tool (the model asks for a compaction at a natural break) is
off by default: a host shows it with ``ToolCatalog(tools, compact_context=True)``.

Invariants: the order is the user's tools sorted by name, then ``compact_context`` when the host
opted in, then `todo_write`, then (in a mode that offers them) the task tools by name, so the
mode-dependent tools sit at the end of the catalog; the same inputs give the same catalog bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from compaction import BUILTIN_TOOLS, COMPACT_CONTEXT, TOOL_NAME, ConfigError
from compaction.compactor import compact_context_schema
from compaction.tools import (
    TASK_TOOL_NAMES,
    TASK_WRITE_TOOLS,
    parameters_schema,
    task_parameters_schema,
)
from prompts.rendering import render

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _empty_parameters() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


class ToolSpec(BaseModel):
    """One tool, provider-neutral: name, description and a JSON schema of its parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=_NAME.pattern)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: _empty_parameters())
    strict: bool | None = None
    """OpenAI strict function calling, when the definition asked for it."""

    def openai(self) -> dict[str, Any]:
        """Return the tool as an OpenAI chat-completions function tool."""
        function: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        if self.strict is not None:
            function["strict"] = self.strict
        return {"type": "function", "function": function}

    def anthropic(self) -> dict[str, Any]:
        """Return the tool as an Anthropic messages tool."""
        return {"name": self.name, "description": self.description, "input_schema": self.parameters}


def tool_spec(definition: Mapping[str, Any] | type[BaseModel]) -> ToolSpec:
    """Return the `ToolSpec` of an OpenAI or Anthropic tool definition, or of a pydantic model.

    Raises:
        ConfigError: the definition has no usable name or an unknown shape.
    """
    if isinstance(definition, type) and issubclass(definition, BaseModel):
        return _from_model(definition)
    if not isinstance(definition, Mapping):
        raise ConfigError(f"a tool must be a mapping or a pydantic model, not {definition!r}")
    fields = definition.get("function", definition)
    if definition.get("type", "function") != "function" or not isinstance(fields, Mapping):
        raise ConfigError(f"tool {definition.get('type')!r} is not a function tool")
    name = fields.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(f"tool name {name!r} must match {_NAME.pattern}")
    params = fields.get("parameters", fields.get("input_schema"))
    return ToolSpec(
        name=name,
        description=str(fields.get("description") or ""),
        parameters=dict(params) if isinstance(params, Mapping) else _empty_parameters(),
        strict=fields.get("strict") if isinstance(fields.get("strict"), bool) else None,
    )


def _from_model(model: type[BaseModel]) -> ToolSpec:
    title = model.model_config.get("title")
    name = title or re.sub(r"(?<!^)(?=[A-Z])", "_", model.__name__).lower()
    schema = model.model_json_schema()
    schema.pop("title", None)
    description = schema.pop("description", None) or ""
    return tool_spec({"name": name, "description": description, "parameters": schema})


def load_tools(path: Path | str) -> tuple[ToolSpec, ...]:
    """Read user tools from a JSON file: an array of OpenAI (or Anthropic) tool definitions.

    Raises:
        ConfigError: the file cannot be read, is not a JSON array, or holds a bad definition;
            the message names the file and the item.
    """
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read tools file {file}: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(f"{file}: not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise ConfigError(f"{file}: expected a JSON array of tool definitions")
    out: list[ToolSpec] = []
    for i, item in enumerate(data):
        try:
            out.append(tool_spec(item))
        except ConfigError as exc:
            raise ConfigError(f"{file}: tools[{i}]: {exc}") from None
    return tuple(out)


def todo_write_description(*, allow_parallel_in_progress: bool) -> str:
    """Return the `todo_write` description: one task in progress, or several in parallel mode."""
    text = render(
        "tools/todo_write.md.j2", {"allow_parallel_in_progress": allow_parallel_in_progress}
    )
    return text.rstrip("\n")


def todo_write_spec(*, allow_parallel_in_progress: bool = False) -> ToolSpec:
    """Return `todo_write` as a strict `ToolSpec`: compaction's schema, the mode's description."""
    description = todo_write_description(allow_parallel_in_progress=allow_parallel_in_progress)
    return ToolSpec(
        name=TOOL_NAME, description=description, parameters=parameters_schema(), strict=True
    )


def task_tool_spec(name: str) -> ToolSpec:
    """Return a task tool (`task_create`, `task_update`, `task_list`) as a `ToolSpec`.

    Raises:
        ConfigError: `name` is not a task tool.
    """
    if name not in TASK_TOOL_NAMES:
        raise ConfigError(
            f"{name!r} is not a task tool; choose one of {', '.join(TASK_TOOL_NAMES)}"
        )
    description = render(f"tools/{name}.md.j2", {}).rstrip("\n")
    return ToolSpec(name=name, description=description, parameters=task_parameters_schema(name))


def compact_context_spec() -> ToolSpec:
    """Return the ``compact_context`` tool: compaction's schema, the description template's text."""
    description = render(f"tools/{COMPACT_CONTEXT}.md.j2", {}).rstrip("\n")
    return ToolSpec(
        name=COMPACT_CONTEXT, description=description, parameters=compact_context_schema()
    )


def openai_tool(description: str, *, strict: bool = True) -> dict[str, Any]:
    """Return `todo_write` with this description as an OpenAI function tool (closed schema)."""
    spec = ToolSpec(
        name=TOOL_NAME, description=description, parameters=parameters_schema(), strict=strict
    )
    return spec.openai()


def anthropic_tool(description: str) -> dict[str, Any]:
    """Return `todo_write` with this description as an Anthropic tool (`input_schema`)."""
    return ToolSpec(
        name=TOOL_NAME, description=description, parameters=parameters_schema()
    ).anthropic()


class ToolCatalog:
    """The user's tools, checked and sorted by name (the built-in tools are added per mode).

    Args:
        tools: tool definitions (OpenAI or Anthropic dicts, pydantic models, or `ToolSpec`).
        compact_context: show the built-in ``compact_context`` tool in every mode (default off).

    Raises:
        ConfigError: two tools share a name, or a user tool takes a built-in tool's name.
    """

    def __init__(
        self,
        tools: Iterable[ToolSpec | Mapping[str, Any] | type[BaseModel]] = (),
        *,
        compact_context: bool = False,
    ) -> None:
        specs = [t if isinstance(t, ToolSpec) else tool_spec(t) for t in tools]
        seen: set[str] = set()
        for spec in specs:
            if spec.name in BUILTIN_TOOLS:
                raise ConfigError(f"a user tool may not be called {spec.name}; it is built in")
            if spec.name in seen:
                raise ConfigError(f'two user tools are called "{spec.name}"; names must be unique')
            seen.add(spec.name)
        self.user_tools: tuple[ToolSpec, ...] = tuple(sorted(specs, key=lambda s: s.name))
        self.compact_context = compact_context
        """Whether the catalog shows ``compact_context`` (after the user tools)."""

    @classmethod
    def from_file(cls, path: Path | str, *, compact_context: bool = False) -> ToolCatalog:
        """Return a catalog of the tools in a JSON file (see `load_tools`)."""
        return cls(load_tools(path), compact_context=compact_context)

    def tools(
        self,
        *,
        allow_parallel_in_progress: bool,
        include_todo_write: bool = True,
        exclude: Sequence[str] = (),
        task_tools: bool = False,
        task_writes: bool = True,
    ) -> tuple[ToolSpec, ...]:
        """Return the catalog: user tools, ``compact_context``, `todo_write`, task tools.

        User tools come by name (minus `exclude`); ``compact_context`` when the host shows it.
        The task tools come by name when `task_tools` is set (only `task_list` without
        `task_writes`).
        """
        out = [t for t in self.user_tools if t.name not in exclude]
        if self.compact_context and COMPACT_CONTEXT not in exclude:
            out.append(compact_context_spec())
        if include_todo_write:
            out.append(todo_write_spec(allow_parallel_in_progress=allow_parallel_in_progress))
        if task_tools:
            names = [n for n in TASK_TOOL_NAMES if task_writes or n not in TASK_WRITE_TOOLS]
            out += [task_tool_spec(n) for n in names]
        return tuple(out)

    def names(self) -> tuple[str, ...]:
        """Return the user tools' names, in catalog order."""
        return tuple(t.name for t in self.user_tools)
