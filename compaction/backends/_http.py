"""The HTTP side of the provider backends: one JSON POST with the LLM client's retries and bounds.

`EndpointClient` is `compaction.llm.ChatClient` pointed at another path, with the provider's
headers: it inherits the retries on 429/5xx/timeouts, the whole-attempt deadline and the answer
size cap. Imports httpx (the ``llm`` extra): only the backends that call a provider load it.

Invariants: an error message never holds the API key, a bearer token or a byte of the answer
body beyond the server's short error text (an answer may carry an opaque item); the answer read
is bounded by `ChatConfig.answer_cap`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from compaction.backends.base import BackendConfig
from compaction.errors import ProviderError
from compaction.llm.client import ChatClient, ChatConfig, canonical_json


@dataclass(frozen=True)
class EndpointConfig(ChatConfig):
    """A `ChatConfig` whose requests go to ``{base_url}{path}``."""

    path: str = "/v1/responses/compact"
    """The endpoint below the host, with its ``/v1``."""

    @property
    def url(self) -> str:
        """The endpoint's URL: a base URL with or without ``/v1`` reaches the same one."""
        root = self.base_url.rstrip("/")
        return root.removesuffix("/v1") + self.path


class EndpointClient(ChatClient):
    """Posts one JSON body to a provider endpoint and returns the decoded JSON object.

    Args:
        config: the backend's endpoint, model, key variable and limits.
        path: the endpoint below the API root.
        backend: the backend's name, whose default key variable applies when the config
            names none (`BackendConfig.key_env`).
        auth: ``bearer`` (``Authorization: Bearer KEY``) or ``x-api-key`` (Anthropic).
        extra_headers: headers sent with every request (Anthropic's version and beta).
        transport: an httpx transport, for tests that mock the network.
    """

    def __init__(
        self,
        config: BackendConfig,
        *,
        path: str,
        backend: str = "openai-responses",
        auth: str = "bearer",
        extra_headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(
            EndpointConfig(
                base_url=config.base_url,
                model=config.model,
                api_key_env=config.key_env(backend),
                timeout=config.timeout,
                max_retries=config.max_retries,
                max_output_tokens=config.max_output_tokens,
                path=path,
            ),
            transport=transport,
        )
        self.auth = auth
        self.extra_headers = dict(extra_headers or {})

    def headers(self) -> dict[str, str]:
        """Return the request headers, with the key in the provider's header when it is set."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers |= self.extra_headers
        key = self.environ.get(self.config.api_key_env, "")
        if key and self.auth == "x-api-key":
            headers["x-api-key"] = key
        elif key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def post_json(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Post `body` and return the answer's JSON object.

        Raises:
            ProviderError: the call failed for good, or the answer is not a JSON object; the
                message never holds the key nor the answer's body.
        """
        content = canonical_json(dict(body)).encode("utf-8")
        try:
            with httpx.Client(timeout=self.config.timeout, transport=self.transport) as http:
                response, _ = self._post(http, content)
            return _json_object(self.config.url, response)
        except ProviderError as exc:
            message = self.redact(str(exc).removeprefix(f"{exc.code}: "))
            failure = ProviderError(exc.code, message, status=exc.status)
        except Exception as exc:  # an unexpected failure may quote a header: never show it raw
            detail = self.redact(f"{type(exc).__name__}: {exc}")
            failure = ProviderError("transport", f"{self.config.url}: {detail}")
        # Raised outside the handler, so the unredacted original is not kept as __context__.
        raise failure


def _json_object(url: str, response: httpx.Response) -> dict[str, Any]:
    """Return the body as a JSON object; the error never quotes the body."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ProviderError("bad_response", f"{url}: the answer is not a JSON object")
    return data
