"""Modes: what the agent is told and allowed in each way of working. A mode is data.

A `Mode` names its template blocks (rendered, in order, as the mode block of the system prompt),
its tool policy (user tools it forbids, and how a forbidden tool is presented) and its todo policy
(whether `todo_write` is allowed, and whether several items may be in progress). Three modes are
built in: ``agent`` (the default: one task in progress), ``parallel`` (several in progress, for
agents that dispatch sub-agents or background jobs) and ``plan`` (read-only planning, in which
`todo_write` is forbidden by the prompt and refused by code). Users define more in a TOML or JSON
file, with their templates in a folder beside it (see `load_modes`); nothing registers itself by
import.

Invariants: the built-in modes share every layer of the prompt except their mode block and the
in-progress rule of the `todo_write` description; a forbidden `todo_write` is never executed.
"""

from __future__ import annotations

import json
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from compaction.errors import ConfigError
from prompts.sandbox import BUILTIN_TEMPLATES

ToolStrategy = Literal["stable", "filtered"]
"""How a mode presents the tools it forbids.

``stable``: the tool catalog stays byte-identical across modes; the prompt forbids the tool and
code refuses a call. ``filtered``: forbidden tools are removed from the catalog.
"""

TOOL_STRATEGIES: tuple[ToolStrategy, ...] = ("stable", "filtered")
DEFAULT_MODE = "agent"
MAX_MODES_FILE_BYTES = 1024 * 1024
"""Largest modes file read."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolPolicy(_Frozen):
    """Which of the user's tools a mode forbids, and how they are presented."""

    forbidden: tuple[str, ...] = ()
    """Names of user tools the mode must not call: removed by ``filtered``, refused by code
    (`prompts.tool_refusal`) under either strategy; todo_write is governed by `TodoPolicy`."""
    strategy: ToolStrategy = "stable"
    """How forbidden tools are presented, unless the caller overrides it."""


class TodoPolicy(_Frozen):
    """How a mode treats `todo_write`."""

    forbidden: bool = False
    """True: the prompt says `todo_write` must not be called, and code refuses a call."""
    allow_parallel_in_progress: bool = False
    """Several items may be `in_progress` at once (description and validation both follow)."""
    refusal: str = "refusals/todo_write.md.j2"
    """Template of the result a refused call returns to the model."""


class Mode(_Frozen):
    """One mode: its name, template blocks, tool policy and todo policy."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$")
    """Lowercase name, as given to ``--mode``."""
    title: str = Field(min_length=1)
    """The name as the model reads it, e.g. ``Plan``."""
    summary: str = ""
    """One line for people (``harness modes``); never shown to the model."""
    blocks: tuple[str, ...] = ()
    """Templates rendered in order as the mode block, e.g. ``modes/plan.md.j2``."""
    tools: ToolPolicy = ToolPolicy()
    todo: TodoPolicy = TodoPolicy()
    template_dir: Path | None = None
    """A user's template folder (rendered sandboxed, falling back to the built-in templates);
    None for built-in modes."""

    @property
    def todo_write_allowed(self) -> bool:
        """Return whether `todo_write` may run in this mode."""
        return not self.todo.forbidden


BUILTIN_MODES: dict[str, Mode] = {
    "agent": Mode(
        name="agent",
        title="Agent",
        summary="default: do the work, exactly one todo in progress",
        blocks=("modes/agent.md.j2",),
    ),
    "parallel": Mode(
        name="parallel",
        title="Parallel",
        summary="sub-agents or background jobs: several todos in progress at once",
        blocks=("modes/parallel.md.j2",),
        todo=TodoPolicy(allow_parallel_in_progress=True),
    ),
    "plan": Mode(
        name="plan",
        title="Plan",
        summary="read-only planning: todo_write is forbidden and refused",
        blocks=("modes/plan.md.j2",),
        todo=TodoPolicy(forbidden=True),
    ),
}
"""The built-in modes, by name."""


def load_modes(path: Path | str) -> dict[str, Mode]:
    """Read user modes from a TOML or JSON file.

    The file holds a list ``modes`` of tables with the fields of `Mode`. Block templates are
    looked up in ``template_dir`` (relative to the file; default: the file's folder), then among
    the built-in templates. Example (TOML)::

        [[modes]]
        name = "review"
        title = "Review"
        blocks = ["review.md.j2"]
        todo = { allow_parallel_in_progress = false }

    Raises:
        ConfigError: the file cannot be read or parsed, a mode is invalid, or a name repeats or
            shadows a built-in mode; the message names the file and the fix.
    """
    file = Path(path)
    raw = _read(file)
    entries = raw.get("modes")
    if not isinstance(entries, list):
        raise ConfigError(f'{file}: expected a list "modes" of mode tables')
    out: dict[str, Mode] = {}
    for i, entry in enumerate(entries):
        mode = _parse_mode(file, i, entry)
        if mode.name in BUILTIN_MODES or mode.name in out:
            raise ConfigError(f'{file}: modes[{i}]: mode "{mode.name}" already exists; rename it')
        out[mode.name] = mode
    return out


def _read(file: Path) -> dict[str, Any]:
    try:
        info = file.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"cannot read modes file {file}: not a regular file")
        if info.st_size > MAX_MODES_FILE_BYTES:
            raise ConfigError(
                f"modes file {file} has {info.st_size} bytes, above the limit of "
                f"{MAX_MODES_FILE_BYTES}"
            )
        text = file.read_bytes()[: MAX_MODES_FILE_BYTES + 1].decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read modes file {file}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"modes file {file} is not UTF-8: {exc.reason}") from None
    try:
        data: Any = json.loads(text) if file.suffix == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if file.suffix == ".json" else "TOML"
        raise ConfigError(f"{file}: not valid {kind}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f'{file}: expected an object with a list "modes"')
    return data


def _parse_mode(file: Path, index: int, entry: object) -> Mode:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{file}: modes[{index}] must be a table")
    fields = dict(entry)
    fields["template_dir"] = _template_dir(file, index, str(fields.pop("template_dir", ".")))
    try:
        return Mode.model_validate(fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'mode'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise ConfigError(f"{file}: modes[{index}]: {problems}") from None


def _template_dir(file: Path, index: int, given: str) -> Path:
    """Resolve a mode's template folder: it must lie inside the modes file's folder.

    Symlinks are followed before the check, so neither ``..`` nor a link can point a mode at
    templates (or any file) elsewhere; the built-in templates are allowed too.
    """
    folder = Path(given)
    resolved = (folder if folder.is_absolute() else file.parent / folder).resolve()
    home = file.parent.resolve()
    if not (resolved.is_relative_to(home) or resolved.is_relative_to(BUILTIN_TEMPLATES)):
        raise ConfigError(
            f"{file}: modes[{index}]: template_dir {given!r} resolves to {resolved}, outside "
            f"the modes file's folder {home}; keep the templates beside the modes file"
        )
    if not resolved.is_dir():
        raise ConfigError(f"{file}: modes[{index}]: template_dir {given!r} is not a folder")
    return resolved


def available_modes(path: Path | str | None = None) -> dict[str, Mode]:
    """Return the built-in modes, plus the user modes of `path` when given."""
    modes = dict(BUILTIN_MODES)
    if path is not None:
        modes.update(load_modes(path))
    return modes


def get_mode(name: str, modes: Mapping[str, Mode] | None = None) -> Mode:
    """Return the mode called `name` from `modes` (default: the built-in modes).

    Raises:
        ConfigError: no such mode; the message lists the choices.
    """
    pool = BUILTIN_MODES if modes is None else modes
    try:
        return pool[name]
    except KeyError:
        choices = ", ".join(pool)
        raise ConfigError(f'unknown mode "{name}"; choose one of {choices}') from None
