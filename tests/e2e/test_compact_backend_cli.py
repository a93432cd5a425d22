"""`harness compact --backend` and `harness context --format responses` against the stub."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import CheckpointRecorded, Session, read_events
from harness.testing import Reply, StubModel

TODOS = [
    {"content": "Add the --verbose flag", "status": "completed"},
    {"content": "Test the flag", "status": "in_progress"},
    {"content": "Document it", "status": "pending"},
]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    with Session(path) as s:
        s.start_turn("Add a --verbose flag to the CLI.", mode="agent")
        assert not s.todo_write({"todos": TODOS}).is_error
        for i in range(6):
            s.add_message({"role": "user", "content": f"Step {i}: " + "edit the CLI " * 30})
            s.add_message({"role": "assistant", "content": f"Did {i}. " + "done " * 30})
    return path


def checkpoint(log: Path) -> CheckpointRecorded:
    """The newest checkpoint event of the log."""
    found = [e for e in read_events(log) if isinstance(e, CheckpointRecorded)]
    assert found
    return found[-1]


def env() -> dict[str, str]:
    return {**os.environ, "STUB_KEY": "sk-stub-cli-key-0123456789"}


class TestBackendCli:
    def test_openai_responses_then_context(self, log: Path) -> None:
        """--backend openai-responses records the item; --format responses sends it first."""
        with StubModel([Reply(compaction="cli-opaque-item")]) as stub:
            done = run_cli(
                "compact", log, "--force", "--window", "4000", "--json",
                "--backend", "openai-responses", "--base-url", stub.base_url,
                "--model", "gpt-stub", "--api-key-env", "STUB_KEY", "--max-retries", "0",
                env=env(),
            )  # fmt: skip
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert out["backend"] == "openai-responses"
        assert out["backend_item"] is True
        assert stub.requests[0].headers["authorization"] == "Bearer sk-stub-cli-key-0123456789"
        event = checkpoint(log)
        assert event.data.provider is not None
        assert event.data.provider.item is not None
        assert event.data.provider.item["encrypted_content"] == "cli-opaque-item"
        shown = run_cli("context", log, "--format", "responses", "--model", "gpt-stub")
        assert shown.returncode == 0, shown.stderr
        request = json.loads(shown.stdout)
        assert request["input"][0]["encrypted_content"] == "cli-opaque-item"
        assert '- "Test the flag"' in request["input"][1]["content"]
        assert '- "Document it"' in request["input"][1]["content"]
        chat = run_cli("context", log, "--format", "openai")
        assert "cli-opaque-item" not in chat.stdout

    def test_auto_with_the_anthropic_format(self, log: Path) -> None:
        """--backend auto --backend-format anthropic uses the anthropic backend."""
        with StubModel([Reply(compaction="anthropic summary")]) as stub:
            done = run_cli(
                "compact", log, "--force", "--window", "4000",
                "--backend", "auto", "--backend-format", "anthropic", "--backend-form", "edit",
                "--base-url", stub.root_url, "--model", "claude-stub", "--max-retries", "0",
            )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert stub.requests[0].path == "/v1/messages"
        # The stub's span is under the default 50,000-token trigger: the local Checkpoint stands.
        assert "backend fallback: anthropic failed:" in done.stdout
        event = checkpoint(log)
        assert event.data.provider is not None
        assert event.data.provider.item is None
        assert event.data.current == ("Test the flag",)

    def test_auto_speaks_the_newest_forms(self, log: Path) -> None:
        """By default each provider's newest form: the trigger item, on-demand compaction."""
        with StubModel([Reply(compaction="opaque"), Reply(compaction="Test the flag: ok")]) as stub:
            for fmt, url in (("responses", stub.base_url), ("anthropic", stub.root_url + "/v1")):
                done = run_cli(
                    "compact", log, "--force", "--window", "4000", "--json",
                    "--backend", "auto", "--backend-format", fmt,
                    "--base-url", url, "--model", "m", "--max-retries", "0",
                )  # fmt: skip
                assert done.returncode == 0, done.stderr
                assert json.loads(done.stdout)["backend_item"] is True
        openai, anthropic = (r.json() for r in stub.requests)
        assert [r.path for r in stub.requests] == ["/v1/responses", "/v1/messages"]
        assert openai["input"][-1] == {"type": "compaction_trigger"}
        assert anthropic["compaction"] == {"type": "summarize"}
        assert stub.requests[1].headers["anthropic-beta"] == "compact-2026-09-04"
        assert json.loads(done.stdout)["open_items_kept"] == ["Test the flag"]

    def test_anthropic_compact_trigger(self, log: Path) -> None:
        """--compact-trigger sets the edit's trigger: a low one gets the block recorded."""
        with StubModel([Reply(compaction="anthropic summary")]) as stub:
            done = run_cli(
                "compact", log, "--force", "--window", "4000", "--json",
                "--backend", "anthropic", "--compact-trigger", "100", "--backend-form", "edit",
                "--base-url", stub.root_url, "--model", "claude-stub", "--max-retries", "0",
            )  # fmt: skip
        assert done.returncode == 0, done.stderr
        edit = stub.requests[0].json()["context_management"]["edits"][0]
        assert edit["trigger"] == {"type": "input_tokens", "value": 100}
        assert json.loads(done.stdout)["backend_item"] is True
        block = checkpoint(log).data.provider
        assert block is not None
        assert block.item == {"type": "compaction", "content": "anthropic summary"}

    def test_fallback_is_reported_in_one_line(self, log: Path) -> None:
        """A 500 leaves the local Checkpoint, and the report says why on one line."""
        with StubModel([Reply(status=500)]) as stub:
            done = run_cli(
                "compact", log, "--force", "--window", "4000",
                "--backend", "openai-responses", "--base-url", stub.base_url,
                "--model", "m", "--max-retries", "0",
            )  # fmt: skip
        assert done.returncode == 0, done.stderr
        lines = [x for x in done.stdout.splitlines() if x.startswith("backend fallback:")]
        assert len(lines) == 1
        assert "HTTP 500" in lines[0]

    @pytest.mark.parametrize(
        ("extra", "message"),
        [
            (["--backend", "anthropic"], "--backend anthropic needs --model"),
            (
                ["--backend", "openai-responses", "--model", "m", "--api-key-env", "sk-abc=1"],
                "takes the NAME of an environment variable",
            ),
            (
                ["--backend", "openai-responses", "--model", "m", "--base-url", "ftp://x"],
                "base_url must start with http",
            ),
            (["--backend", "anthropic", "--model", "m", "--compact-trigger", "0"], "> 0, not 0"),
            (["--backend", "anthropic", "--model", "m", "--timeout", "0"], "--timeout must be > 0"),
        ],
    )
    def test_bad_options_are_one_line(self, log: Path, extra: list[str], message: str) -> None:
        """A missing model, a key as the variable, a bad URL: one line, exit 2, no traceback."""
        done = run_cli("compact", log, "--force", *extra)
        assert done.returncode == 2
        assert message in done.stderr
        assert "Traceback" not in done.stderr
        assert "sk-abc" not in done.stderr
        assert not [e for e in read_events(log) if isinstance(e, CheckpointRecorded)]


def keys_env() -> dict[str, str]:
    """The environment with a distinct key in each provider's default variable."""
    return {
        **os.environ,
        "OPENAI_API_KEY": "sk-openai-default-0123456789",
        "ANTHROPIC_API_KEY": "sk-ant-default-0123456789",
    }


class TestDefaultKeyVariable:
    @pytest.mark.parametrize(
        ("backend", "header", "value"),
        [
            (["--backend", "anthropic"], "x-api-key", "sk-ant-default-0123456789"),
            (
                ["--backend", "auto", "--backend-format", "anthropic"],
                "x-api-key",
                "sk-ant-default-0123456789",
            ),
            (
                ["--backend", "openai-responses"],
                "authorization",
                "Bearer sk-openai-default-0123456789",
            ),
            (
                ["--backend", "auto", "--backend-format", "responses"],
                "authorization",
                "Bearer sk-openai-default-0123456789",
            ),
        ],
    )
    def test_each_backend_reads_its_providers_key(
        self, log: Path, backend: list[str], header: str, value: str
    ) -> None:
        """Without --api-key-env, anthropic sends ANTHROPIC_API_KEY, OpenAI OPENAI_API_KEY."""
        with StubModel([Reply(compaction="opaque")]) as stub:
            url = stub.root_url if "anthropic" in backend else stub.base_url
            done = run_cli(
                "compact", log, "--force", "--window", "4000", *backend,
                "--base-url", url, "--model", "m", "--max-retries", "0", env=keys_env(),
            )  # fmt: skip
        assert done.returncode == 0, done.stderr
        sent = stub.requests[0].headers
        assert sent[header] == value
        other = "authorization" if header == "x-api-key" else "x-api-key"
        assert other not in sent

    def test_a_named_variable_wins(self, log: Path) -> None:
        """--api-key-env still names the variable for anthropic."""
        env = {**keys_env(), "MY_KEY": "sk-mine-0123456789abcdef"}
        with StubModel([Reply(compaction="opaque")]) as stub:
            done = run_cli(
                "compact", log, "--force", "--window", "4000", "--backend", "anthropic",
                "--base-url", stub.root_url, "--model", "m", "--max-retries", "0",
                "--api-key-env", "MY_KEY", env=env,
            )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert stub.requests[0].headers["x-api-key"] == "sk-mine-0123456789abcdef"
