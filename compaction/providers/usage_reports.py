"""Provider usage: the token figures an OpenAI or Anthropic response reports, as a `usage/report`.

An agent loop that logs each call's ``usage`` lets the session learn the provider's token
scale (`compaction.views.token_scale`): how many tokens the provider counts for each one this
toolkit counts. `usage_report` reads the ``usage`` of a response object of the official SDKs
(or its plain-JSON form) in any of three shapes:

- OpenAI chat completions: ``prompt_tokens``, ``completion_tokens``,
  ``prompt_tokens_details.cached_tokens``.
- OpenAI Responses: ``input_tokens``, ``output_tokens``, ``input_tokens_details.cached_tokens``
  (and ``cache_write_tokens`` where the details have it, as chat completions' may).
- Anthropic messages: ``input_tokens`` counts only the uncached part, so the prompt is
  ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``.

`compaction.compacting_call` records it for each answered call, before the caller logs the
reply (so the report covers every message the request held).

Invariants: reading never raises on an unknown shape (it returns None); a report is only made
when the provider reported a positive prompt size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from compaction.events import UsageReportData

TURN: Final = "turn"
"""The `UsageReportData.purpose` of an agent's own model call."""


def _field(value: object, name: str) -> object:
    """Read `name` of a mapping or an object (an SDK's pydantic model); None when absent."""
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def _count(value: object) -> int:
    """A token figure, or 0 when it is missing or not a non-negative int."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_report(response: object, *, purpose: str = TURN) -> UsageReportData | None:
    """Return the provider's usage of `response` as a `usage/report`, or None without one.

    Args:
        response: an OpenAI ``ChatCompletion`` or ``Response``, an Anthropic ``Message``, or
            the same as a decoded JSON object.
        purpose: what the call was for (``turn``: the agent's own call).
    """
    usage = _field(response, "usage")
    if usage is None:
        return None
    model = _field(response, "model")
    name = model if isinstance(model, str) and model else "unknown"
    if _field(usage, "prompt_tokens") is not None:  # chat completions
        prompt = _count(_field(usage, "prompt_tokens"))
        completion = _count(_field(usage, "completion_tokens"))
        details = _field(usage, "prompt_tokens_details")
        cached, written = _field(details, "cached_tokens"), _field(details, "cache_write_tokens")
    elif (
        _field(usage, "cache_read_input_tokens") is not None
        or _field(usage, "cache_creation_input_tokens") is not None
    ):  # Anthropic: input_tokens is the uncached part only
        read = _count(_field(usage, "cache_read_input_tokens"))
        made = _count(_field(usage, "cache_creation_input_tokens"))
        prompt = _count(_field(usage, "input_tokens")) + read + made
        completion = _count(_field(usage, "output_tokens"))
        cached, written = read, made
    else:  # Responses (or Anthropic without cache figures)
        prompt = _count(_field(usage, "input_tokens"))
        completion = _count(_field(usage, "output_tokens"))
        details = _field(usage, "input_tokens_details")
        cached, written = _field(details, "cached_tokens"), _field(details, "cache_write_tokens")
    if prompt <= 0:
        return None
    return UsageReportData(
        purpose=purpose,
        model=name,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=_count(cached) if isinstance(cached, int) else None,
        cache_write_tokens=_count(written) if isinstance(written, int) else None,
    )


__all__ = ["TURN", "usage_report"]
