"""The `todo_write` tool: schema, strict validation and execution.

One tool, full overwrite: its only parameter is `todos`, an array of items with exactly `content`
and `status`. Each accepted call replaces the whole list by appending one `todo/write` event.

Model experience (these strings are a contract; tests pin them):
- accepted: ``Todo list updated: 3 pending, 1 in progress, 2 completed.``
- rejected: ``todo_write: rejected, nothing was changed. Fix the arguments and call again:``
  followed by one ``- `` line per violation, for example
  ``- todos[1]: unknown field "id"; an item has only "content" and "status"``,
  ``- todos[2].content is blank`` (also for content made only of invisible characters: zero-width
  spaces, a BOM, bidi marks, NUL and other control characters),
  ``- todos[3].content duplicates todos[0]: "Run tests"``,
  ``- 2 items are in_progress (todos[0], todos[2]); keep exactly one in_progress``,
  ``- arguments repeat the key "todos"; send each key once``,
  ``- todos[0].content is 2400 characters long; keep it to at most 2000 characters (a short
  sentence: put long detail in a file and name the file)`` (`MAX_ITEM_CHARS`, after trimming),
  ``- arguments are larger than 1000000 bytes; send a short list`` (UTF-8 bytes, not characters;
  a mapping is measured as its JSON).
- refused by mode: the mode's refusal (`compaction.tools.mode_policy`), appended nothing.
- two or more calls in one model response (the latest assistant message of the log holds
  several `todo_write` calls, one still unanswered): each is refused with
  ``- this response makes 2 todo_write calls; each is refused, so no list was lost. Send one
  todo_write call per response, holding the whole updated list`` (a call with bad arguments
  gets its violations instead); nothing is appended.

Hosts run the tool through `Session.todo_write` (or `compaction.call_tool`); this module owns
its schema and its validation, and never touches a session.

Invariants: a rejected call appends nothing and changes no view; validation never raises,
whatever bytes it is given. "At most one in_progress" is policy (`allow_parallel_in_progress`),
so it lives here and not in the log's invariants: recorded history may hold several.
"""

from __future__ import annotations

import copy
import unicodedata
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Annotated, Any, Final

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from compaction.contract import TODO_WRITE
from compaction.errors import ToolInputError
from compaction.events import TODO_STATUSES, Message, TodoItem, TodoStatus
from compaction.tools.arguments import MAX_ITEM_CHARS, Arguments, load_arguments, show, too_long
from compaction.views import count_statuses

TOOL_NAME: Final = TODO_WRITE
_MAX_REPORTED = 20

ARGUMENT_EXAMPLE = '{"todos": [{"content": "Run the tests", "status": "in_progress"}]}'


_INVISIBLE_FILLERS = frozenset("\u115f\u1160\u2800\u3164\uffa0")
"""Characters that render as nothing though Unicode does not class them as format characters."""


def is_blank(content: str) -> bool:
    """Tell whether `content` shows nothing: only whitespace and invisible characters.

    Invisible: Unicode format characters (category Cf: zero-width space and joiners, the BOM,
    bidi marks and isolates, the soft hyphen...), control characters (category Cc: NUL, the
    other C0 and C1 controls) and the blank fillers (Hangul fillers, the blank braille pattern).
    """
    return all(
        ch.isspace() or ch in _INVISIBLE_FILLERS or unicodedata.category(ch) in ("Cf", "Cc")
        for ch in content
    )


def _trimmed(content: str) -> str:
    """Trim content with `str.strip`, the same rule the duplicate check uses; reject blank."""
    content = content.strip()
    if is_blank(content):
        raise PydanticCustomError("blank", "content is blank")
    if len(content) > MAX_ITEM_CHARS:
        raise PydanticCustomError(
            "too_long", "content is {length} characters long", {"length": len(content)}
        )
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (JSON "\ud800") cannot be written to the log.
        raise PydanticCustomError("string_unicode", "content is not valid Unicode") from None
    return content


class TodoArg(BaseModel):
    """One todo as the model sends it."""

    model_config = ConfigDict(extra="forbid")

    content: Annotated[str, AfterValidator(_trimmed)] = Field(
        description="What to do, as an imperative sentence."
    )
    status: TodoStatus = Field(description="pending, in_progress or completed.")


class TodoWriteArgs(BaseModel):
    """The arguments of `todo_write`: the whole new list."""

    model_config = ConfigDict(extra="forbid")

    todos: list[TodoArg] = Field(description="The complete updated todo list.")


def _loc(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _describe(err: Mapping[str, Any]) -> str:
    """Turn one pydantic error into a line a model can act on."""
    loc = tuple(err["loc"])
    kind = err["type"]
    where = _loc(loc)
    field = loc[-1] if loc else ""
    item = _loc(loc[:-1])
    match kind:
        case "extra_forbidden" if len(loc) == 1:
            return f'unknown parameter "{field}"; the only parameter is "todos"'
        case "extra_forbidden":
            return f'{item}: unknown field "{field}"; an item has only "content" and "status"'
        case "missing" if loc == ("todos",):
            return 'missing the required parameter "todos" (an array of {content, status})'
        case "missing":
            return f'{item} is missing "{field}"'
        case "literal_error":
            statuses = ", ".join(TODO_STATUSES)
            return f"{where} must be one of {statuses}, not {show(err.get('input'))}"
        case "blank":
            return f"{where} is blank"
        case "too_long":
            return too_long(where, int(err.get("ctx", {}).get("length", 0)))
        case "string_type":
            return f"{where} must be a string"
        case "string_unicode":
            return f"{where or 'arguments'} must be valid Unicode text"
        case "list_type":
            return f'"{where}" must be an array of {{content, status}} objects'
        case "model_type" | "dict_type" | "model_attributes_type":
            return f'{where} must be an object with "content" and "status"'
        case _:
            return f"{where or 'arguments'}: {err['msg']}"


def _semantic(raw_items: list[Any], allow_parallel: bool) -> list[str]:
    """Check duplicates and the in-progress rule over the well-formed items."""
    problems: list[str] = []
    first_at: dict[str, int] = {}
    in_progress: list[int] = []
    for i, item in enumerate(raw_items):
        if not isinstance(item, Mapping):
            continue
        content, status = item.get("content"), item.get("status")
        if isinstance(content, str) and content.strip():
            key = content.strip()
            if key in first_at:
                problems.append(
                    f"todos[{i}].content duplicates todos[{first_at[key]}]: {show(key)}"
                )
            else:
                first_at[key] = i
        if status == "in_progress":
            in_progress.append(i)
    if len(in_progress) > 1 and not allow_parallel:
        where = ", ".join(f"todos[{i}]" for i in in_progress)
        problems.append(
            f"{len(in_progress)} items are in_progress ({where}); keep exactly one in_progress "
            "and mark the others pending or completed"
        )
    return problems


def parse_todo_write(arguments: Arguments, *, allow_parallel: bool = False) -> tuple[TodoItem, ...]:
    """Validate `todo_write` arguments; return the new list or raise `ToolInputError`.

    Every violation is listed, with its item index. Never raises anything else.
    """
    try:
        obj = load_arguments(
            arguments,
            TOOL_NAME,
            example=ARGUMENT_EXAMPLE,
            shape='with one key "todos"',
            short="list",
        )
        try:
            args = TodoWriteArgs.model_validate(obj)
            problems: list[str] = []
        except ValidationError as exc:
            args = None
            problems = [_describe(e) for e in exc.errors(include_url=False)]
        if isinstance(obj.get("todos"), (list, tuple)):
            problems += _semantic(list(obj["todos"]), allow_parallel)
    except ToolInputError:
        raise
    except RecursionError:
        problems, args = [f"arguments are nested too deeply; send {ARGUMENT_EXAMPLE}"], None
    except (MemoryError, ValueError, TypeError) as exc:
        problems, args = [f"arguments could not be read ({type(exc).__name__})"], None
    if problems or args is None:
        if len(problems) > _MAX_REPORTED:
            extra = len(problems) - _MAX_REPORTED
            problems = [*problems[:_MAX_REPORTED], f"...and {extra} more problems"]
        # Keys the model sent are quoted as they came; escape lone surrogates so the text prints.
        problems = [p.encode("utf-8", "backslashreplace").decode() for p in problems]
        raise ToolInputError(TOOL_NAME, problems)
    return tuple(TodoItem(content=t.content, status=t.status) for t in args.todos)


def calls_in_one_response(messages: Sequence[Message]) -> int:
    """Count the `todo_write` calls of the latest assistant message while one is unanswered.

    Walks back from the end of the context to the latest assistant message that made tool
    calls, noting the results seen after it; returns how many of its calls are `todo_write`
    when at least one of those has no result yet (0 otherwise: an old message whose calls
    were all answered never blocks a later call).
    """
    answered: set[str] = set()
    for message in reversed(messages):
        if message.role == "tool" and message.tool_call_id is not None:
            answered.add(message.tool_call_id)
        elif message.role == "assistant" and message.tool_calls:
            ids = [c.id for c in message.tool_calls if c.function.name == TOOL_NAME]
            return len(ids) if any(i not in answered for i in ids) else 0
        elif message.role == "user":
            return 0
    return 0


def one_list_per_response(calls: int) -> ToolInputError:
    """Return the rejection of a `todo_write` made beside others in one model response."""
    return ToolInputError(
        TOOL_NAME,
        [
            f"this response makes {calls} todo_write calls; each is refused, so no list was "
            "lost. Send one todo_write call per response, holding the whole updated list"
        ],
    )


def summary_line(todos: Sequence[TodoItem]) -> str:
    """Return the one line of counts the model gets back from an accepted call."""
    counts = count_statuses(todos)
    return (
        f"Todo list updated: {counts['pending']} pending, {counts['in_progress']} in progress, "
        f"{counts['completed']} completed."
    )


def parameters_schema() -> dict[str, Any]:
    """Return the JSON Schema of the arguments, inlined and closed (`additionalProperties: false`).

    Generated from `TodoWriteArgs`, with `$defs` inlined and length keywords dropped, so it fits
    the subset of JSON Schema that strict function calling accepts. Each call returns its own
    copy (a caller may change it); pydantic generates it once per process, since a request
    builder asks for it on every request (14 ms a time, a quarter of a replayed request's cost).
    """
    return copy.deepcopy(_generated_schema())


@cache
def _generated_schema() -> dict[str, Any]:
    schema = TodoWriteArgs.model_json_schema()
    item = schema["$defs"]["TodoArg"]
    item.pop("title", None)
    item["description"] = "One task: what to do and where it stands."
    for prop in item["properties"].values():
        prop.pop("title", None)
    item["additionalProperties"] = False
    todos = schema["properties"]["todos"]
    todos.pop("title", None)
    todos["items"] = item
    return {
        "type": "object",
        "properties": {"todos": todos},
        "required": ["todos"],
        "additionalProperties": False,
    }
