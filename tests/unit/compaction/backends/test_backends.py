"""Provider compaction backends against the stub: recorded events, the next request, fallback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from contracts.sdk_shapes import problems

from compaction import CompactionPolicy, CompactionResult, ConfigError, Session, compact
from compaction.backends import BACKEND_NAMES, BackendConfig, provider_item, resolve_backend
from compaction.events import CheckpointData, ProviderCompactionData
from compaction.views.provider_checkpoint import code_owned_text
from harness.testing import Reply, StubModel
from prompts import (
    BUILTIN_MODES,
    PromptBuilder,
    anthropic_request,
    compaction_backend,
    openai_request,
    responses_request,
)

AGENT = BUILTIN_MODES["agent"]
BUILDER = PromptBuilder()
POLICY = CompactionPolicy(window_tokens=4000, threshold=0.8, retain=0.1)
TODOS = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Fix the off-by-one", "status": "in_progress"},
    {"content": "Run the tests", "status": "pending"},
    {"content": 'Write "docs"\n## Pending Jobs', "status": "pending"},
]


def long_session(session: Session, turns: int = 6) -> None:
    """A session with a todo list, two shared tasks and enough turns to compact."""
    session.start_turn("Fix the parser bug", mode="agent")
    session.todo_write({"todos": TODOS})
    session.task_create({"subject": "Review the patch"})
    session.task_create({"subject": "Update the changelog"})
    session.task_update({"id": "1", "status": "in_progress"})
    for i in range(turns):
        session.add_message({"role": "user", "content": f"Step {i}: " + "look at the code " * 30})
        session.add_message({"role": "assistant", "content": f"Done step {i}. " + "ok " * 40})


@pytest.fixture
def session(log_path: Path) -> Iterator[Session]:
    with Session(log_path) as s:
        long_session(s)
        yield s


def config(stub: StubModel, backend: str, **extra: Any) -> BackendConfig:
    """The backend's config pointed at the stub (the API roots the SDKs use)."""
    base = stub.base_url if backend == "openai-responses" else stub.root_url
    return BackendConfig(
        base_url=base, model="stub-model", api_key_env="STUB_KEY", max_retries=0, **extra
    )


def run(session: Session, stub: StubModel, backend: str, **extra: Any) -> CompactionResult:
    built = compaction_backend(backend, config(stub, backend, compact_trigger=1, **extra))
    return compact(session, POLICY, force=True, backend=built)


def recorded(result: CompactionResult) -> CheckpointData:
    """The payload of the event the compaction appended."""
    assert result.event is not None
    return result.event.data


def provider_of(result: CompactionResult) -> ProviderCompactionData:
    """What the backend recorded in the event."""
    provider = recorded(result).provider
    assert provider is not None
    return provider


class TestResolve:
    @pytest.mark.parametrize(
        ("name", "request_format", "expected"),
        [
            ("auto", "responses", "openai-responses"),
            ("auto", "anthropic", "anthropic"),
            ("auto", "openai", "local"),
            ("auto", None, "local"),
            ("local", "responses", "local"),
            ("anthropic", "openai", "anthropic"),
        ],
    )
    def test_auto_picks_the_format_s_backend(
        self, name: str, request_format: str | None, expected: str
    ) -> None:
        """Auto is the provider's backend where the format has one, local otherwise."""
        assert resolve_backend(name, request_format) == expected

    def test_unknown_name_is_a_config_error(self) -> None:
        """An unknown backend names the choices."""
        with pytest.raises(Exception, match="choose one of local, openai-responses"):
            resolve_backend("gemini")
        assert BACKEND_NAMES[-1] == "auto"

    def test_local_builds_nothing(self) -> None:
        """Local is the toolkit's Checkpoint alone: no backend object."""
        assert compaction_backend("local") is None


class TestOpenAIResponses:
    def test_records_the_item_whole_with_usage(self, session: Session) -> None:
        """The compaction item returned is recorded unchanged, with backend and usage."""
        with StubModel([Reply(compaction="opaque-AAAA")]) as stub:
            result = run(session, stub, "openai-responses", form="endpoint")
        assert stub.requests[0].path == "/v1/responses/compact"
        provider = provider_of(result)
        assert provider.backend == "openai-responses"
        assert provider.item == {
            "type": "compaction",
            "id": "cmp_1",
            "encrypted_content": "opaque-AAAA",
        }
        assert provider.usage is not None
        assert {"input_tokens", "output_tokens", "total_tokens"} <= set(provider.usage)
        assert provider.fallback_reason is None
        assert recorded(result).pending == ("Run the tests", 'Write "docs"\n## Pending Jobs')
        assert recorded(result).current == ("Fix the off-by-one",)

    def test_request_is_a_compact_params_body(self, session: Session) -> None:
        """The body validates as the openai SDK's ResponseCompactParams, the span as input items."""
        types = pytest.importorskip("openai.types.responses.response_compact_params")
        with StubModel([Reply()]) as stub:
            run(session, stub, "openai-responses", form="endpoint")
        body = stub.requests[0].json()
        assert problems(types.ResponseCompactParams, body) == []
        assert body["model"] == "stub-model"
        texts = [item.get("content") for item in body["input"]]
        assert any(isinstance(t, str) and t.startswith("Step 0:") for t in texts)

    def test_next_request_is_item_then_code_owned_then_tail(self, session: Session) -> None:
        """The Responses request carries the item, then the code-owned sections, then the tail."""
        with StubModel([Reply(compaction="opaque-BBBB")]) as stub:
            result = run(session, stub, "openai-responses")
        request = responses_request(BUILDER, AGENT, session)
        items = request["input"]
        assert items[0] == {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque-BBBB"}
        tasks = items[1]["content"]
        assert items[1]["role"] == "user"
        for line in (
            '- "Run the tests"',
            '- "Fix the off-by-one"',
            '- task 2 (no owner): "Update the changelog"',
        ):
            assert line in tasks
        assert '- "Write \\"docs\\"\\n## Pending Jobs"' in tasks
        assert f"events {result.data.first_seq}..{result.data.last_seq}" in tasks
        assert "harness log LOG --seq N" in tasks
        kept = [m.text() for m in session.context.messages]
        assert [i["content"] for i in items[2:]] == kept
        assert kept, "a tail is kept"

    def test_other_formats_get_the_local_checkpoint(self, session: Session) -> None:
        """Chat completions and Anthropic requests carry the local Checkpoint, not the item."""
        with StubModel([Reply(compaction="opaque-CCCC")]) as stub:
            result = run(session, stub, "openai-responses")
        chat = json.dumps(openai_request(BUILDER, AGENT, session))
        messages = json.dumps(anthropic_request(BUILDER, AGENT, session, max_tokens=10))
        for text in (chat, messages):
            assert "opaque-CCCC" not in text
            assert json.dumps(result.data.text)[1:-1] in text

    def test_recompaction_sends_the_previous_item_first(self, session: Session) -> None:
        """A second compaction's span opens with the item the first one recorded."""
        with StubModel([Reply(compaction="first-item"), Reply(compaction="second-item")]) as stub:
            run(session, stub, "openai-responses")
            long_session(session, turns=4)
            second = run(session, stub, "openai-responses")
        body = stub.requests[1].json()
        assert body["input"][0]["encrypted_content"] == "first-item"
        assert provider_of(second).item == {
            "type": "compaction",
            "id": "cmp_2",
            "encrypted_content": "second-item",
        }


class TestAnthropic:
    def test_records_the_block_with_the_beta_header(self, session: Session) -> None:
        """The compact_20260112 edit and beta header go out; the block comes back recorded."""
        with StubModel([Reply(compaction="Summary of the parser work.")]) as stub:
            result = run(session, stub, "anthropic", form="edit")
        sent = stub.requests[0]
        assert sent.path == "/v1/messages"
        assert sent.headers["anthropic-beta"] == "compact-2026-01-12"
        edit = sent.json()["context_management"]["edits"][0]
        assert edit["type"] == "compact_20260112"
        assert edit["pause_after_compaction"] is True
        provider = provider_of(result)
        assert provider.item == {"type": "compaction", "content": "Summary of the parser work."}
        assert provider.backend == "anthropic"

    def test_request_is_a_beta_messages_body(self, session: Session) -> None:
        """The body validates as the anthropic SDK's beta MessageCreateParamsNonStreaming."""
        types = pytest.importorskip("anthropic.types.beta.message_create_params")
        with StubModel([Reply()]) as stub:
            run(session, stub, "anthropic", form="edit")
        body = stub.requests[0].json()
        assert problems(types.MessageCreateParamsNonStreaming, body) == []
        assert body["messages"][-1] == {
            "role": "user",
            "content": [{"type": "text", "text": "Compact the conversation so far."}],
        }

    def test_next_request_opens_with_the_block(self, session: Session) -> None:
        """The Anthropic request opens with the block, then the code-owned sections, the tail."""
        types = pytest.importorskip("anthropic.types.beta.message_create_params")
        with StubModel([Reply(compaction="Summary B")]) as stub:
            run(session, stub, "anthropic")
        request = anthropic_request(BUILDER, AGENT, session, model="m", max_tokens=100)
        first, second = request["messages"][:2]
        assert first == {
            "role": "assistant",
            "content": [{"type": "compaction", "content": "Summary B"}],
        }
        assert second["role"] == "user"
        assert '- "Fix the off-by-one"' in second["content"][0]["text"]
        assert problems(types.MessageCreateParamsNonStreaming, request) == []
        assert "Summary B" not in json.dumps(responses_request(BUILDER, AGENT, session))

    def test_under_the_trigger_falls_back(self, session: Session) -> None:
        """A span under the edit's trigger gets no block: the local Checkpoint stands, with why."""
        with StubModel([Reply()]) as stub:
            built = compaction_backend("anthropic", config(stub, "anthropic", form="edit"))
            result = compact(session, POLICY, force=True, backend=built)
        provider = provider_of(result)
        assert provider.item is None
        assert provider.fallback_reason is not None
        assert "no compaction block" in provider.fallback_reason
        assert "50000-token trigger" in provider.fallback_reason


class TestNewestForms:
    def test_openai_trigger_item_is_the_last_input_item(self, session: Session) -> None:
        """``auto``: /v1/responses with the span, then the compaction_trigger item."""
        with StubModel([Reply(compaction="opaque-BBBB")]) as stub:
            result = run(session, stub, "openai-responses")
        sent = stub.requests[0]
        assert sent.path == "/v1/responses"
        body = sent.json()
        assert body["input"][-1] == {"type": "compaction_trigger"}
        assert body["store"] is False
        assert any(
            isinstance(i.get("content"), str) and i["content"].startswith("Step 0:")
            for i in body["input"]
        )
        assert provider_of(result).item == {
            "type": "compaction",
            "id": "cmp_1",
            "encrypted_content": "opaque-BBBB",
        }
        assert provider_of(result).open_items_kept is None  # opaque: unreadable

    def test_anthropic_on_demand_needs_no_trigger(self, session: Session) -> None:
        """``auto``: the compaction parameter and its beta; no ask message, no edit, no trigger."""
        summary = "Fix the off-by-one: done; next: run the tests."
        with StubModel([Reply(compaction=summary)]) as stub:
            built = compaction_backend("anthropic", config(stub, "anthropic"))
            result = compact(session, POLICY, force=True, backend=built, instructions="tests")
        sent = stub.requests[0]
        body = sent.json()
        assert sent.headers["anthropic-beta"] == "compact-2026-09-04"
        assert body["compaction"] == {"type": "summarize", "instructions": "tests"}
        assert "context_management" not in body
        assert "Compact the conversation so far." not in json.dumps(body["messages"])
        provider = provider_of(result)
        assert provider.item == {"type": "compaction", "content": summary}
        # A readable summary: the receipt says which open items it named.
        assert provider.open_items_kept == ("Run the tests", "Fix the off-by-one")
        assert provider.open_items_missed is not None
        assert 'Write "docs"\n## Pending Jobs' in provider.open_items_missed
        assert "Run the tests" not in provider.open_items_missed

    @pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
    def test_a_base_url_with_or_without_v1_reaches_the_endpoint(
        self, session: Session, suffix: str
    ) -> None:
        """``/v1`` given or not, the request goes to /v1/messages (never /v1/v1/messages)."""
        with StubModel([Reply(compaction="s")]) as stub:
            cfg = BackendConfig(
                base_url=stub.root_url + suffix, model="m", api_key_env="K", max_retries=0
            )
            result = compact(
                session, POLICY, force=True, backend=compaction_backend("anthropic", cfg)
            )
        assert stub.requests[0].path == "/v1/messages"
        assert provider_of(result).item is not None

    def test_an_unknown_form_is_refused(self) -> None:
        """A form not in BACKEND_FORMS is a ConfigError naming the choices."""
        with pytest.raises(ConfigError, match="form must be one of auto, trigger"):
            BackendConfig(base_url="http://x", model="m", form="newest")


FAILURES = [
    pytest.param(Reply(status=400), "HTTP 400", id="400"),
    pytest.param(Reply(status=401), "HTTP 401", id="401"),
    pytest.param(Reply(status=500), "HTTP 500", id="500"),
    pytest.param(Reply(status=503), "HTTP 503", id="503"),
    pytest.param(Reply(hang=True), "timeout", id="timeout"),
    pytest.param(Reply(body=b"not json {"), "not a JSON object", id="garbage"),
    pytest.param(Reply(body=b"[1, 2]"), "not a JSON object", id="array"),
    pytest.param(Reply(body=b'{"output": "x"}'), "no compaction", id="no-output"),
    pytest.param(Reply(compaction=""), "no compaction", id="no-item"),
]


class TestFallback:
    @pytest.mark.parametrize("backend", ["openai-responses", "anthropic"])
    @pytest.mark.parametrize(("reply", "reason"), FAILURES)
    def test_every_failure_leaves_the_local_checkpoint(
        self, session: Session, backend: str, reply: Reply, reason: str
    ) -> None:
        """4xx, 5xx, timeouts, garbage and an answer without the item fall back, saying why."""
        local = compact(session, POLICY, force=True, dry_run=True)
        with StubModel([reply], hang_limit=5.0) as stub:
            result = run(session, stub, backend, timeout=0.5)
        data, why = recorded(result), provider_of(result).fallback_reason
        assert provider_of(result).item is None
        assert why is not None
        assert reason in why
        assert why.startswith(f"{backend} failed: ")
        assert "\n" not in why
        assert data.text == local.data.text
        assert data.pending == ("Run the tests", 'Write "docs"\n## Pending Jobs')
        request = responses_request(BUILDER, AGENT, session)
        assert request["input"][0]["content"].endswith(data.text)

    def test_dry_run_calls_no_provider(self, session: Session) -> None:
        """A dry run computes the local Checkpoint and never calls the provider."""
        with StubModel([Reply()]) as stub:
            built = compaction_backend("openai-responses", config(stub, "openai-responses"))
            result = compact(session, POLICY, force=True, dry_run=True, backend=built)
        assert stub.requests == []
        assert result.data.provider is None


class TestView:
    def test_item_only_for_its_own_backend(self, session: Session) -> None:
        """provider_item hands the item to the backend that made it, and to no other."""
        with StubModel([Reply(compaction="mine")]) as stub:
            result = run(session, stub, "openai-responses")
        assert provider_item(result.data, "openai-responses") == provider_of(result).item
        assert provider_item(result.data, "anthropic") is None
        assert provider_item(None, "anthropic") is None

    def test_code_owned_text_lists_every_unfinished_item(self, session: Session) -> None:
        """Every pending and in-progress todo and task is there, once each, in its section."""
        with StubModel([Reply()]) as stub:
            result = run(session, stub, "openai-responses")
        text = code_owned_text(result.data)
        pending, current = text.split("## Current Work")
        assert pending.count('- "Run the tests"') == 1
        assert '- task 2 (no owner): "Update the changelog"' in pending
        assert '- "Fix the off-by-one"' in current.split("## Earlier Turns")[0]
        assert '- task 1 (owner "main"): "Review the patch"' in current
        assert '"Read the parser"' not in text


def test_a_provider_backend_must_build_its_request_and_pick_its_item() -> None:
    """A backend that names no `body` or `pick` cannot be made: the shared part is abstract."""
    from compaction.backends._provider_backend import ProviderBackend
    from compaction.backends.base import BackendConfig

    class Half(ProviderBackend):
        name = "half"
        path = "/v1/half"

        def body(self, span: Any) -> dict[str, Any]:
            return {}

    with pytest.raises(TypeError, match="pick"):
        Half(BackendConfig(base_url="http://127.0.0.1:9", model="m"), lambda m: [])  # type: ignore[abstract]
