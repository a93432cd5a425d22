"""A testing kit: a scripted model server on loopback, for users' tests and the project's own.

`StubModel` speaks OpenAI chat completions, the OpenAI Responses API, Anthropic Messages and
the Gemini API (``/v1/chat/completions``, ``/v1/responses``, ``/v1/messages``,
``/v1beta/models/MODEL:generateContent``), whole or streamed (server-sent events, when the
request asks for them), answering from a script of
`Reply` objects (text, `ToolCall`s, usage figures, statuses, each provider's real overflow
body), and records every request it received. `rules` answer the requests they recognise
without using a step: `summary_rule` answers the compaction summary request of Claude Code,
Codex CLI and Gemini CLI with a scripted summary. Point an SDK's base URL at ``stub.url`` and an
agent loop runs offline, with no key:

    from harness.testing import Reply, StubModel, ToolCall

    with StubModel([Reply(tool_calls=[ToolCall("todo_write", {"todos": []})]), Reply("Done.")]) as
        stub: ...  # OpenAI(base_url=stub.url + "/v1", api_key="x") or Anthropic(base_url=stub.url,
        ...)

`make_agent_run` runs the real agent CLIs (Claude Code, Codex CLI, Gemini CLI; installed by
``scripts/install-agents``) against the stub, offline.

The kit also starts a throwaway PostgreSQL server from the system's binaries
(`running_postgres`), for tests of the PostgreSQL store.

Rule of this room: it imports only the standard library (and `compaction`'s root where it
must); nothing in the product imports it.
"""

from harness.testing._agent_clis import (
    AGENT_PACKAGES,
    AgentRun,
    agent_binary,
    agents_dir,
    items_held,
    make_agent_run,
)
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
from harness.testing._routes import api_of
from harness.testing._rules import (
    SUMMARY_MARKERS,
    RequestText,
    Rule,
    is_summary_request,
    request_text,
    summary_rule,
    text_rule,
)
from harness.testing._tool_pairing import PAIRING_STATUS, pairing_body, unanswered_ids

__all__ = [
    "AGENT_PACKAGES",
    "MAX_BODY",
    "OVERFLOW_STATUS",
    "PAIRING_STATUS",
    "PATHS",
    "SUMMARY_MARKERS",
    "AgentRun",
    "Api",
    "Dialect",
    "LocalPostgres",
    "PrefixCache",
    "RecordedRequest",
    "Reply",
    "RequestText",
    "Rule",
    "Script",
    "ServerUnavailable",
    "StubModel",
    "ToolCall",
    "agent_binary",
    "agents_dir",
    "api_of",
    "demo_reply",
    "is_summary_request",
    "items_held",
    "make_agent_run",
    "overflow_body",
    "pairing_body",
    "prompt_pieces",
    "prompt_tokens",
    "request_text",
    "running_postgres",
    "start_postgres",
    "summary_rule",
    "text_rule",
    "unanswered_ids",
]
