"""The stand-in model's context-overflow refusals: each provider's real "request too long" body.

A provider refuses an over-long request with HTTP 400 and its own body, and an agent loop is
tested against exactly those bytes (the SDKs turn them into their ``BadRequestError``):

- OpenAI chat completions: ``code: context_length_exceeded`` and "This model's maximum context
  length is M tokens. However, your messages resulted in N tokens."
- OpenAI Responses: ``code: context_length_exceeded`` and "Your input exceeds the context window
  of this model."
- Anthropic messages: ``invalid_request_error`` and "prompt is too long: N tokens > M maximum".
- DeepSeek (and vLLM-style OpenAI-compatible servers) on chat completions: ``code:
  invalid_request_error`` and "This model's maximum context length is M tokens. However, you
  requested N tokens (... in the messages, ... in the completion)."

Invariants: the body is a pure function of the API, the dialect and the two sizes.
"""

from __future__ import annotations

import json
from typing import Final, Literal

from harness.testing._prefix_cache import Api

Dialect = Literal["openai", "deepseek"]
"""Whose wording a chat-completions refusal uses (the path alone does not tell them apart)."""

OVERFLOW_STATUS: Final = 400
"""The HTTP status every provider refuses an over-long request with."""


def overflow_body(api: Api, dialect: Dialect, requested: int, window: int) -> bytes:
    """Return the refusal body of a `requested`-token request against a `window`-token model.

    Args:
        api: the API the request spoke (by its path).
        dialect: the chat-completions wording (``openai`` or ``deepseek``).
        requested: the request's size, in the stub's tokens.
        window: the model's context window, in the stub's tokens.
    """
    if api == "anthropic":
        message = f"prompt is too long: {requested} tokens > {window} maximum"
        refusal = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        return json.dumps(refusal).encode()
    param: str | None
    if api in ("responses", "responses_compact"):
        message = (
            "Your input exceeds the context window of this model. "
            "Please adjust your input and try again."
        )
        code, param = "context_length_exceeded", "input"
    elif dialect == "deepseek":
        completion = 4096
        message = (
            f"This model's maximum context length is {window} tokens. However, you requested "
            f"{requested + completion} tokens ({requested} in the messages, {completion} in the "
            "completion). Please reduce the length of the messages or completion."
        )
        code, param = "invalid_request_error", None
    else:
        message = (
            f"This model's maximum context length is {window} tokens. However, your messages "
            f"resulted in {requested} tokens. Please reduce the length of the messages."
        )
        code, param = "context_length_exceeded", "messages"
    error: dict[str, str | None] = {
        "message": message,
        "type": "invalid_request_error",
        "param": param,
        "code": code,
    }
    return json.dumps({"error": error}).encode()
