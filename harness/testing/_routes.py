"""Which API a request to the stand-in model speaks, by its path, and whether it wants a stream.

Invariants: a path the table does not name (nor Gemini's ``/v1beta/models/MODEL:METHOD``) speaks
no API and gets a 404; reading a body never raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from harness.testing._prefix_cache import Api
from harness.testing._replies import RecordedRequest

PATHS: dict[str, Api] = {
    "/v1/chat/completions": "openai",
    "/v1/messages": "anthropic",
    "/v1/responses": "responses",
    "/v1/responses/compact": "responses_compact",
}
"""The fixed paths the stub answers, and the API each speaks (`api_of` adds Gemini's)."""

GEMINI_METHODS = (":generateContent", ":streamGenerateContent")
"""The Gemini API methods the stub answers under ``/v1beta/models/MODEL``."""


def api_of(path: str) -> Api | None:
    """Return the API a request path speaks, or None for a path the stub does not answer."""
    bare = urlsplit(path).path
    if bare in PATHS:
        return PATHS[bare]
    if bare.startswith("/v1beta/models/") and bare.endswith(GEMINI_METHODS):
        return "gemini"
    return None


def wants_stream(path: str, request: Mapping[str, Any]) -> bool:
    """Tell whether a request asks for a streamed answer."""
    if api_of(path) == "gemini":
        parts = urlsplit(path)
        return parts.path.endswith(":streamGenerateContent") and "alt=sse" in parts.query
    return request.get("stream") is True


def decoded(request: RecordedRequest) -> Mapping[str, Any]:
    """Return the request's JSON object, or an empty one when the body is not one."""
    try:
        decoded = request.json()
    except ValueError:
        return {}
    return decoded if isinstance(decoded, Mapping) else {}
