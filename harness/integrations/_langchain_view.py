"""LangChain messages ⇄ the log: how a message is recorded, and the log's view as messages.

A LangChain message is recorded as a `compaction.Message` that keeps its id and its serialized
form in ``provider_fields``; the log's view comes back as LangChain messages: the Checkpoint as
a human message (id ``context-harness-checkpoint-<last folded seq>``, marked by
``additional_kwargs["lc_source"]``), then each kept message as it was recorded (a clipped tool
result with the text the context shows). Also here: the request's system text, read and set the
same way on every `langchain` 1.x (``ModelRequest.system_message`` arrived after 1.0.0, which
has ``system_prompt`` only).

Invariants: a recorded message comes back with its own id; the Checkpoint is never recorded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Final, cast

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
    convert_to_openai_messages,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.utils.function_calling import convert_to_openai_tool

from compaction import (
    Message,
    Session,
    Tokenizer,
    UsageReportData,
    count_message,
    from_openai,
)
from compaction.views import checkpoint_message
from prompts import openai_message

ID_FIELD: Final = "langchain_id"
"""The provider field that keeps a logged message's LangChain id."""
MESSAGE_FIELD: Final = "langchain_message"
"""The provider field that keeps a logged message in LangChain's own serialized form."""
CHECKPOINT_SOURCE: Final = "context-harness"
"""``additional_kwargs["lc_source"]`` of the Checkpoint message (it is never logged as a turn)."""
CHECKPOINT_ID: Final = "context-harness-checkpoint-{seq}"
"""The Checkpoint message's id: `seq` is the last event its span folds (it grows with each one)."""
LOGGED_ID: Final = "context-harness-{seq}"
"""The id given to a message of the log that no LangChain message recorded (a resumed log)."""


def is_checkpoint(message: BaseMessage) -> bool:
    """Tell whether a state message is the log's Checkpoint."""
    return message.additional_kwargs.get("lc_source") == CHECKPOINT_SOURCE


def record(lc: BaseMessage) -> Message:
    """The `Message` that records a LangChain message (its id and serialized form kept)."""
    dump = convert_to_openai_messages(lc)
    message = from_openai(dump)
    fields = dict(message.provider_fields or {})
    fields[ID_FIELD] = cast(str, lc.id)
    fields[MESSAGE_FIELD] = _serialized(lc)
    return message.model_copy(update={"provider_fields": fields})


def _serialized(lc: BaseMessage) -> dict[str, Any]:
    """A LangChain message as plain JSON data; without its usage when no JSON can hold that."""
    try:
        data: dict[str, Any] = json.loads(json.dumps(message_to_dict(lc), default=str))
    except ValueError:  # a figure of thousands of digits: the message is kept, its usage not
        bare = lc.model_copy(update={"usage_metadata": None, "response_metadata": {}})
        data = json.loads(json.dumps(message_to_dict(bare), default=str))
    return data


def lc_message(message: Message, seq: int) -> AnyMessage:
    """The LangChain message of a logged message: the one recorded, as the context shows it."""
    fields = message.provider_fields or {}
    kept = fields.get(MESSAGE_FIELD)
    if isinstance(kept, dict):
        lc = cast(AnyMessage, messages_from_dict([kept])[0])
        if isinstance(lc, ToolMessage) and lc.content != message.text():
            # A clipped result: the log keeps it whole, the context shows head, note and tail.
            return lc.model_copy(update={"content": message.text()})
        return lc
    built = cast(AnyMessage, convert_to_messages([openai_message(message)])[0])
    built.id = LOGGED_ID.format(seq=seq)
    return built


def view_messages(session: Session) -> list[AnyMessage]:
    """The log's context view as LangChain messages (after a compaction, Checkpoint first)."""
    window = session.context
    out: list[AnyMessage] = []
    if window.checkpoint is not None:
        out.append(
            HumanMessage(
                content=checkpoint_message(window.checkpoint).text(),
                id=CHECKPOINT_ID.format(seq=window.checkpoint.last_seq),
                additional_kwargs={"lc_source": CHECKPOINT_SOURCE},
            )
        )
    out += [lc_message(m, seq) for m, seq in zip(window.messages, window.seqs, strict=True)]
    return out


def usage_of(message: BaseMessage) -> UsageReportData | None:
    """The provider's usage an AI message carries, as a `usage/report` event.

    None when it carries none, or usage no event can hold (a negative or enormous figure, a
    field that cannot be read): logging usage never fails an answered call.
    """
    try:
        return _usage_report(message)
    except Exception:  # hostile usage: the answer is still logged and returned
        return None


def _usage_report(message: BaseMessage) -> UsageReportData | None:
    if not isinstance(message, AIMessage) or not message.usage_metadata:
        return None
    usage = message.usage_metadata
    details = usage.get("input_token_details") or {}
    model = message.response_metadata.get("model_name") or message.response_metadata.get("model")
    return UsageReportData(
        purpose="turn",
        model=str(model or "unknown"),
        prompt_tokens=usage["input_tokens"],
        completion_tokens=usage["output_tokens"],
        cached_tokens=details.get("cache_read"),
        cache_write_tokens=details.get("cache_creation"),
    )


def system_text(request: ModelRequest[Any]) -> str:
    """The request's system text (``system_message`` where it exists, else ``system_prompt``)."""
    message = getattr(request, "system_message", None)
    if isinstance(message, SystemMessage):
        return message.text
    prompt = getattr(request, "system_prompt", None)
    return prompt if isinstance(prompt, str) else ""


def with_system(request: ModelRequest[Any], text: str) -> ModelRequest[Any]:
    """The request with this system text, on any `langchain` 1.x."""
    if "system_message" in getattr(type(request), "__dataclass_fields__", {}):
        return request.override(system_message=SystemMessage(content=text))
    older = cast(Any, request)  # langchain 1.0.x: no system_message field
    return cast(ModelRequest[Any], older.override(system_prompt=text))


def fixed_part_tokens(tok: Tokenizer, system: str | None, tools: Iterable[object]) -> int:
    """Count a request's fixed part: the system text and the tool specs."""
    total = count_message(tok, Message(role="system", content=system)) if system else 0
    specs = [convert_to_openai_tool(cast(Any, t)) for t in tools]
    return total + (tok.count(json.dumps(specs, sort_keys=True)) if specs else 0)


def messages_tokens(tok: Tokenizer, messages: Sequence[BaseMessage]) -> int:
    """Count a request's messages as the log would record them."""
    return sum(count_message(tok, record(m)) for m in messages)
