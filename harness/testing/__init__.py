"""A testing kit: a scripted model server on loopback, for users' tests and the project's own.

`StubModel` speaks OpenAI chat completions, the OpenAI Responses API and Anthropic Messages
(``/v1/chat/completions``, ``/v1/responses``, ``/v1/messages``), answering from a script of
`Reply` objects (text, `ToolCall`s, usage figures, statuses, each provider's real overflow
body), and records every request it received. Point an SDK's base URL at ``stub.url`` and an
agent loop runs offline, with no key:

    from harness.testing import Reply, StubModel, ToolCall

    with StubModel([Reply(tool_calls=[ToolCall("todo_write", {"todos": []})]), Reply("Done.")]) as
        stub: ...  # OpenAI(base_url=stub.url + "/v1", api_key="x") or Anthropic(base_url=stub.url,
        ...)

The kit also starts a throwaway PostgreSQL server from the system's binaries
(`running_postgres`), for tests of the PostgreSQL store.

Rule of this room: it imports only the standard library (and `compaction`'s root where it
must); nothing in the product imports it.
"""

from harness.testing._demo_agent import demo_reply
from harness.testing._model_server import MAX_BODY, PATHS, StubModel
from harness.testing._overflow_bodies import OVERFLOW_STATUS, Dialect, overflow_body
from harness.testing._postgres_server import (
    LocalPostgres,
    ServerUnavailable,
    running_postgres,
    start_postgres,
)
from harness.testing._prefix_cache import Api, PrefixCache, prompt_pieces, prompt_tokens
from harness.testing._replies import RecordedRequest, Reply, Script, ToolCall
from harness.testing._tool_pairing import PAIRING_STATUS, pairing_body, unanswered_ids

__all__ = [
    "MAX_BODY",
    "OVERFLOW_STATUS",
    "PAIRING_STATUS",
    "PATHS",
    "Api",
    "Dialect",
    "LocalPostgres",
    "PrefixCache",
    "RecordedRequest",
    "Reply",
    "Script",
    "ServerUnavailable",
    "StubModel",
    "ToolCall",
    "demo_reply",
    "overflow_body",
    "pairing_body",
    "prompt_pieces",
    "prompt_tokens",
    "running_postgres",
    "start_postgres",
    "unanswered_ids",
]
