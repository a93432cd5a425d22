"""The fixed part of a request: what the model receives besides the session's context view.

Compaction budgets the whole request (`compaction.CompactionPolicy`), but `compaction` never
builds prompts; this module measures the part the prompt side adds, so an agent loop can pass it
on: ``maybe_compact(session, policy, fixed_tokens=fixed_tokens(builder, mode))``.

The fixed part is the system prompt, counted as one system message (`compaction.count_message`,
the same counter as the context view), plus the tool catalog as the canonical JSON a provider
receives (`catalog_text`). A block the caller adds to the system prompt (a todo list injected
there, say) is passed as `system_suffix`.

Invariants: the count is a pure function of the builder, the mode, the suffix and the tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass

from compaction import Message, Session, Tokenizer, count_message, get_tokenizer
from prompts.builder import PromptBuilder
from prompts.modes import Mode
from prompts.stability import catalog_text


@dataclass(frozen=True)
class RequestSize:
    """A request's size in tokens, by part."""

    system: int
    """The system prompt, as one system message."""
    tools: int
    """The tool catalog (0 without tools)."""
    context: int
    """The session's context view: system messages, Checkpoint and kept messages."""

    @property
    def fixed(self) -> int:
        """The system prompt and the tool catalog."""
        return self.system + self.tools

    @property
    def total(self) -> int:
        """The whole request."""
        return self.fixed + self.context


def request_size(
    builder: PromptBuilder,
    mode: Mode,
    session: Session | None = None,
    *,
    tokenizer: Tokenizer | None = None,
    system_suffix: str | None = None,
) -> RequestSize:
    """Return the tokens of the request `mode` would send over a session's context, by part.

    Args:
        builder: lays out the system prompt and the tool catalog.
        mode: the mode the system prompt is built for.
        session: the session whose context view is sent (None: the fixed part alone); its
            tokenizer counts unless `tokenizer` is given.
        tokenizer: counts the tokens (default: the session's, else ``o200k_base``).
        system_suffix: a block appended to the system prompt after a blank line.
    """
    tok = tokenizer or (session.tokenizer if session is not None else get_tokenizer())
    layers = builder.layers(mode)
    system = layers.system_prompt + (f"\n\n{system_suffix}" if system_suffix else "")
    tools = tok.count(catalog_text(layers)) if layers.tools else 0
    return RequestSize(
        system=count_message(tok, Message(role="system", content=system)),
        tools=tools,
        context=session.context_tokens if session is not None else 0,
    )


def fixed_tokens(
    builder: PromptBuilder,
    mode: Mode,
    *,
    tokenizer: Tokenizer | None = None,
    system_suffix: str | None = None,
) -> int:
    """Return the tokens of `mode`'s system prompt and tool catalog (see `request_size`)."""
    return request_size(builder, mode, tokenizer=tokenizer, system_suffix=system_suffix).fixed
