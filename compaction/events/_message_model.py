"""The chat message a `message` event records, with its content blocks and tool calls.

Messages use the OpenAI chat fields (`tool_calls`, `tool_call_id`), which every provider adapter
in this toolkit translates from.

Invariants: only assistant messages carry tool calls, only tool messages a `tool_call_id`, an
exit status or a clip; a clip never shows more characters than the text holds.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Discriminator, Field, JsonValue, model_validator

from compaction.contract import ORIGINS as ORIGINS
from compaction.contract import Origin as Origin
from compaction.contract import Role as Role
from compaction.events._base import MAX_INT, _Frozen


class TextPart(_Frozen):
    """A text block of a message's content."""

    type: Literal["text"] = "text"
    text: str


class ImageURL(_Frozen):
    """Where an image lives (a URL or a data URL)."""

    url: str
    detail: str | None = None


class ImagePart(_Frozen):
    """An image block of a message's content."""

    type: Literal["image_url"] = "image_url"
    image_url: ImageURL


ContentPart = Annotated[TextPart | ImagePart, Discriminator("type")]


class FunctionCall(_Frozen):
    """The function an assistant asked to call, with its arguments as a JSON string."""

    name: str
    arguments: str


class ToolCall(_Frozen):
    """One tool call of an assistant message (OpenAI chat format)."""

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ClipData(_Frozen):
    """How much of an oversized tool result the context view shows, decided when appended.

    The log keeps the whole result; the model sees its first `head_chars` and last `tail_chars`
    characters around a one-line note (see `compaction.views.clipping`).
    """

    head_chars: int = Field(ge=0, le=MAX_INT)
    """Characters shown from the start of the text."""
    tail_chars: int = Field(ge=0, le=MAX_INT)
    """Characters shown from the end of the text."""
    omitted_tokens: int = Field(ge=0, le=MAX_INT)
    """Tokens of the text left out, as counted when the result was appended."""


class Message(_Frozen):
    """A chat message as the model sees it (OpenAI chat-completions fields)."""

    role: Role
    content: str | tuple[ContentPart, ...] | None = None
    """Text, content blocks, or None for an assistant turn made only of tool calls."""
    tool_calls: tuple[ToolCall, ...] | None = None
    """Tool calls of an assistant message."""
    tool_call_id: str | None = None
    """For a `tool` message: the id of the call it answers."""
    name: str | None = None
    """Optional participant or tool name."""
    origin: Origin | None = None
    """Where the text came from, when the writer knows: ``user`` (a person typed it),
    ``injected`` (context the agent's tool added: AGENTS.md, environment, caveats, reminders),
    ``command`` (a slash command's tags), ``skill`` (a skill or command body the tool expanded),
    ``interruption`` (an interruption or abort notice), ``mode_switch`` (a mode message),
    ``recorded_summary`` (another agent's summary of earlier turns), ``shell`` (a shell escape
    the user ran and its output: Claude Code's ``<bash-input>``, ``<bash-stdout>``), ``hook``
    (a hook's notice, "Operation stopped by hook") or ``reminder`` (this toolkit's stale-list
    reminder, `compaction.compactor.reminders`) or ``subagent`` (a sub-agent's notice to its
    parent: Codex's ``<subagent_notification>``, never a request). Absent on a user message:
    taken as typed by a person. Only ``user`` text is read as a request or a constraint. Never
    sent to a provider."""
    clip: ClipData | None = None
    """For a tool result over the session's cap: what the context view shows of it."""
    exit_code: int | None = Field(default=None, ge=-MAX_INT, le=MAX_INT)
    """For a `tool` message: the exit status the transcript recorded for the call, when it has
    one (Codex's ``Process exited with code N``, Claude Code's ``Exit code N``, Gemini CLI's
    ``Exit Code: N``); 0 is a pass. Never sent to a provider."""
    failed: bool | None = None
    """For a `tool` message: whether the transcript marks the call as failed (a non-zero exit
    status, Claude Code's ``is_error``, Gemini CLI's error status); None when it says nothing.
    Never sent to a provider."""
    provider_fields: dict[str, JsonValue] | None = None
    """Fields the provider's SDK returned that this model does not hold (OpenAI's
    ``annotations``, ``refusal``, ``audio``; DeepSeek's ``reasoning_content``; Anthropic's
    ``thinking`` blocks, ``id``, ``usage``...), kept as received. Not sent back to a model,
    except where the request format needs them (Anthropic's ``thinking`` blocks before a
    ``tool_use``, a ``tool_result``'s ``is_error``)."""

    @model_validator(mode="after")
    def _check_roles(self) -> Message:
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only assistant messages carry tool_calls")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message needs the tool_call_id of the call it answers")
        if self.tool_call_id is not None and self.role != "tool":
            raise ValueError("only tool messages carry a tool_call_id")
        if (self.exit_code is not None or self.failed is not None) and self.role != "tool":
            raise ValueError("only tool messages carry an exit_code or failed")
        if self.clip is not None:
            if self.role != "tool":
                raise ValueError("only tool messages carry a clip")
            if self.clip.head_chars + self.clip.tail_chars > len(self.text()):
                raise ValueError("a clip shows more characters than the text holds")
        return self

    def text(self) -> str:
        """Return the message's text content, blocks joined by newlines."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))
