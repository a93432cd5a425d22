"""`OpenAISummarizer`: a model writes a Checkpoint's narrative, reusing the prompt cache.

Import it from ``compaction.llm`` (with the ``llm`` extra, for the httpx client it talks through).

The summary call is the conversation's last request, replayed: its messages (system prompt
first) and its tool catalog go out unchanged, and exactly one user message is appended with the
checkpoint instruction (``compaction/templates/checkpoint_instruction.md.j2``). Every token
before that message is a prefix the provider has just seen, so it serves nearly all of the
prompt from its cache. ``tool_choice`` is ``none``: the call cannot run a tool, and the catalog
stays byte-identical (removing tools would change the prefix).

The caller hands the last request over as plain JSON data (``{"messages": [...], "tools":
[...]}``, e.g. from `prompts.requests.openai_request`), so `compaction` never imports `prompts`.

What the model writes is checked by code before it can reach a Checkpoint. The summarizer
raises, and the compactor falls back to the extractive summarizer and records why in the
checkpoint event, when the call fails (after the client's retries), when the answer is empty,
cut short at ``max_tokens``, has none of the Checkpoint's headings, or is larger than the span it
replaces, and when the request handed over does not hold the span being compacted. A missing
narrative section becomes ``(none)``; `Pending Jobs` and `Current Work` are dropped from the
answer, since the compactor writes them from the log: a model that drops or invents a task
changes nothing there.

Invariants: the summary request's messages and tools equal the last request's, byte for byte in
the client's canonical JSON, plus one final user message; every answered call leaves one
`UsageReportData` in `reports`, for the caller to append to the log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from jinja2 import Template

from compaction.checkpoint import (
    CODE_OWNED_SECTIONS,
    EMPTY,
    NARRATIVE_SECTIONS,
    SECTION_NAMES,
    render_checkpoint,
    split_sections,
    template_environment,
)
from compaction.errors import CompactionError, ConfigError
from compaction.events import Event, Message, UsageReportData
from compaction.session import Session
from compaction.summarizers._base import SummaryInput
from compaction.tokens import Tokenizer, count_message, get_tokenizer
from compaction.views import checkpoint_preamble

if TYPE_CHECKING:
    # Only for annotations: at run time this module never imports httpx (the client does).
    from compaction.llm.client import ChatAnswer, ChatClient

SUMMARY_PURPOSE: Final = "summary"
"""The `UsageReportData.purpose` of a summary call."""


@cache
def _instruction_template() -> Template:
    return template_environment().get_template("checkpoint_instruction.md.j2")


def instruction(*, kept: int, previous: bool, budget: int, focus: str | None = None) -> str:
    """Render the checkpoint instruction appended to the replayed request.

    Args:
        kept: messages at the end of the conversation that stay verbatim after the Checkpoint.
        previous: whether the conversation opens with an earlier Checkpoint to fold in.
        budget: the token size the model is asked to stay within.
        focus: the compaction's focus instructions, appended when given.
    """
    return _instruction_template().render(
        sections=SECTION_NAMES,
        code_owned=CODE_OWNED_SECTIONS,
        kept=kept,
        previous=previous,
        budget=budget,
        focus=focus or "",
    )


RUNNING_RESULT = "(this call is still running: the compaction happens inside it)"
"""The result the summary request gives a call of the last request that has none yet."""


def _running(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tool results for the calls of the last assistant message that no later message answers."""
    answered: set[object] = set()
    for message in reversed(messages):
        if message.get("role") == "tool":
            answered.add(message.get("tool_call_id"))
            continue
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        ids = [c.get("id") for c in calls or () if isinstance(c, Mapping)]
        return [
            {"role": "tool", "tool_call_id": i, "content": RUNNING_RESULT}
            for i in ids
            if i not in answered
        ]
    return []


def summary_body(request: Mapping[str, Any], text: str) -> dict[str, Any]:
    """Return the summary call's body: the request's messages and tools, plus one user message.

    The messages and tools are the very objects of `request` (never rebuilt), so they serialize
    to the same bytes. ``tool_choice`` is set only when there are tools (some servers reject it
    otherwise). A compaction run inside a tool call (``compact_context``) finds that call, and
    any beside it, without a result at the end of the request: each gets `RUNNING_RESULT`, as
    every provider refuses a request holding an unanswered call.
    """
    messages = [*request["messages"], *_running(request["messages"])]
    body: dict[str, Any] = {"messages": [*messages, {"role": "user", "content": text}]}
    if request.get("tools"):
        body["tools"] = request["tools"]
        body["tool_choice"] = "none"
    return body


# --- finding the span in the request ----------------------------------------------------------

Fingerprint = tuple[str, str, tuple[str, ...], str | None]


def _fingerprint(message: Message) -> Fingerprint:
    calls = tuple(c.id for c in message.tool_calls or ())
    return message.role, message.text(), calls, message.tool_call_id


def _fingerprint_param(param: Mapping[str, Any]) -> Fingerprint:
    content = param.get("content")
    if isinstance(content, list):
        parts = [p for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
        content = "\n".join(str(p.get("text", "")) for p in parts)
    calls = tuple(str(c.get("id")) for c in param.get("tool_calls") or () if isinstance(c, Mapping))
    return str(param.get("role")), content or "", calls, param.get("tool_call_id")


def kept_after_span(params: Sequence[Mapping[str, Any]], span: Sequence[Message]) -> int:
    """Return how many request messages follow the span, locating the span in the request.

    The span is expected right after the leading system messages and, when there is one, the
    checkpoint message; elsewhere only when it occurs exactly once.

    Raises:
        CompactionError: ``summarizer_failed`` when the request does not hold the span.
    """
    wanted = [_fingerprint(m) for m in span]
    have = [_fingerprint_param(p) for p in params]
    n = len(wanted)
    start = next((i for i, p in enumerate(params) if p.get("role") != "system"), len(params))
    if span and start < len(have) and have[start][0] == "user":
        preamble = checkpoint_preamble().split(". ", 1)[0]  # its fixed opening sentence
        if have[start][1].startswith(preamble) and not wanted[0][1].startswith(preamble):
            start += 1
    if have[start : start + n] == wanted:
        return len(have) - start - n
    matches = [i for i in range(len(have) - n + 1) if have[i : i + n] == wanted]
    if len(matches) == 1:
        return len(have) - matches[0] - n
    raise CompactionError(
        "summarizer_failed",
        f"the request handed to the summarizer does not hold the {n} messages being compacted "
        f"({len(matches)} matches); build it from the same log, just before compacting",
    )


# --- the summarizer ---------------------------------------------------------------------------


RequestSource = Mapping[str, Any] | Callable[[], Mapping[str, Any]]
"""The conversation's last request, or a function that builds it when a compaction runs."""


def check_request(request: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return `request` if it is a chat-completions request with a list of messages.

    Raises:
        ConfigError: naming what is missing.
    """
    messages = request.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, Mapping) for m in messages):
        raise ConfigError(
            "OpenAISummarizer: request must be a chat-completions request whose 'messages' "
            "is a list of message objects (e.g. prompts.requests.openai_request(...))"
        )
    return request


class OpenAISummarizer:
    """Writes the narrative sections with a model behind an OpenAI-compatible API.

    Args:
        client: the chat-completions client (endpoint, model, retries, output cap).
        request: the conversation's last request as plain JSON data: ``messages`` (system
            prompt first) and optional ``tools``, replayed unchanged; or a function returning
            it, called at each compaction (for an agent loop that keeps one summarizer, e.g.
            ``lambda: openai_request(builder, mode, session)``).
        tokenizer: counts the span and the answer for the size check (default `o200k_base`).

    Raises:
        ConfigError: when `request` (given as data) has no ``messages`` list.
    """

    def __init__(
        self,
        client: ChatClient,
        request: RequestSource,
        *,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        if not callable(request):
            check_request(request)
        self.client = client
        self.request = request
        self.tokenizer = tokenizer or get_tokenizer()
        self.reports: list[UsageReportData] = []
        """Usage of each answered call, oldest first, for the caller to append to the log."""
        self.last_body: dict[str, Any] | None = None
        """The body of the latest summary call."""

    @property
    def name(self) -> str:
        """Return ``openai``."""
        return "openai"

    def span_tokens(self, span: SummaryInput) -> int:
        """Return the tokens the span replaces: its messages and the previous Checkpoint."""
        total = sum(count_message(self.tokenizer, m) for m in span.messages)
        if span.previous is not None:
            previous = checkpoint_preamble() + render_checkpoint(span.previous)
            total += count_message(self.tokenizer, Message(role="user", content=previous))
        return total

    def summarize(self, span: SummaryInput) -> dict[str, str]:
        """Ask the model for the narrative sections of the span; raise on any failure.

        Raises:
            ProviderError: the API call failed (after retries).
            CompactionError: ``summarizer_failed``: the answer is empty, cut short, has none of
                the headings, or is larger than the span; or the request lacks the span.
        """
        request = check_request(self.request() if callable(self.request) else self.request)
        kept = kept_after_span(request["messages"], span.messages)
        replaced = self.span_tokens(span)
        budget = max(1, min(span.budget_tokens, self.client.config.max_output_tokens))
        text = instruction(
            kept=kept,
            previous=span.previous is not None,
            budget=budget,
            focus=span.instructions,
        )
        self.last_body = summary_body(request, text)
        answer = self.client.complete(self.last_body)
        self._record(answer)
        return self.read_answer(answer, replaced)

    def _record(self, answer: ChatAnswer) -> None:
        usage = answer.usage
        self.reports.append(
            UsageReportData(
                purpose=SUMMARY_PURPOSE,
                model=self.client.redact(str(answer.raw.get("model") or self.client.config.model)),
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                cached_tokens=usage.cached_tokens if usage else None,
            )
        )

    def read_answer(self, answer: ChatAnswer, replaced_tokens: int) -> dict[str, str]:
        """Return the narrative sections of an answer, or raise why it cannot be used."""
        if answer.finish_reason == "length":
            raise _failed("the answer was cut short at max_tokens")
        if not answer.content.strip():
            raise _failed(f"empty answer (finish_reason {answer.finish_reason!r})")
        found = split_sections(answer.content)
        sections: dict[str, str] = {
            name: "" if found[name].strip() == EMPTY else self.client.redact(found[name])
            for name in NARRATIVE_SECTIONS
            if name in found
        }
        if not sections:
            raise _failed(
                "the answer has none of the Checkpoint's narrative headings: "
                + self.client.redact(repr(answer.content[:120]))
            )
        size = self.tokenizer.count("\n".join(sections.values()))
        if size > replaced_tokens:
            raise _failed(
                f"the answer ({size} tokens) is larger than the span it replaces "
                f"({replaced_tokens} tokens)"
            )
        return sections


def record_usage(session: Session, summarizer: OpenAISummarizer) -> list[Event]:
    """Append the summarizer's usage reports to the log as ``usage/report`` events; clear them."""
    events = session.append_many(summarizer.reports) if summarizer.reports else []
    summarizer.reports.clear()
    return events


def _failed(reason: str) -> CompactionError:
    return CompactionError("summarizer_failed", reason)
