"""Section 3: the API key never leaves.

Not in output, errors, fallback_reason, the log, or raised exceptions, even when the server
echoes the Authorization header back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from security.hostile_server import HostileServer

from compaction import ProviderError, Session
from compaction.llm import ChatClient, ChatConfig
from compaction.secrets import REDACTED, redact
from harness.cli import main

KEYS = ["sk-live-THISISSECRET1234567890", "k3y-VERY-private-0001", "tok_with spaces_0002"]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    with Session(path) as s:
        s.start_turn("Add a flag. Keep the old output.", mode="agent")
        assert not s.todo_write({"todos": [{"content": "Ship it", "status": "pending"}]}).is_error
        for i in range(6):
            s.add_message({"role": "assistant", "content": f"Step {i}: edited cli.py " * 30})
        s.start_turn("Also the changelog.", mode="agent")
        s.add_message({"role": "assistant", "content": "Will do."})
        # A request ends the context, so the loop resumes (`continue`) and the summarizer's Next
        # Step, where the hostile server echoes the key, reaches the Checkpoint to be redacted.
        s.add_message({"role": "user", "content": "Go on."})
    return path


def _leaks(key: str, text: str) -> bool:
    return key in text or key.strip() in text or key.replace(" ", "") in text


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("behaviour", ["echo401", "echo200"])
def test_cli_never_shows_or_stores_the_key(
    behaviour: str,
    key: str,
    log: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A server quoting the Authorization header leaks nothing to output, errors or the log."""
    monkeypatch.setenv("HARNESS_SEC_KEY", key)
    with HostileServer(behaviour) as server:
        status = main(
            [
                "compact",
                str(log),
                "--force",
                "--retain",
                "0",
                "--json",
                "--summarizer",
                "openai",
                "--base-url",
                server.base_url,
                "--model",
                "m",
                "--api-key-env",
                "HARNESS_SEC_KEY",
                "--max-retries",
                "0",
                "--timeout",
                "10",
            ]
        )
    out, err = capsys.readouterr()
    assert status == 0
    stored = log.read_text(encoding="utf-8")
    for text in (out, err, stored):
        assert not _leaks(key, text)
        assert "Bearer k" not in text
        assert "Bearer s" not in text
        assert "Bearer t" not in text
    result = json.loads(out)
    if behaviour == "echo401":
        assert result["summarizer"] == "extractive"
        assert "HTTP 401" in result["fallback_reason"]
        assert REDACTED in result["fallback_reason"]
    else:
        assert result["summarizer"] == "openai"
        assert REDACTED in result["checkpoint"]
        usage = [json.loads(line) for line in stored.splitlines() if '"usage/report"' in line]
        assert usage
        assert REDACTED in usage[-1]["data"]["model"]


def test_exception_never_holds_the_key() -> None:
    """The ProviderError raised for a 401 that echoes the header holds no trace of the key."""
    key = KEYS[0]
    with HostileServer("echo401") as server:
        config = ChatConfig(server.base_url, "m", api_key_env="K", max_retries=0, timeout=10)
        client = ChatClient(config, environ={"K": key})
        with pytest.raises(ProviderError) as info:
            client.complete({"messages": [{"role": "user", "content": "hi"}]})
    assert not _leaks(key, str(info.value))
    assert not _leaks(key, repr(info.value.args))
    assert info.value.__cause__ is None
    assert info.value.__context__ is None
    assert "HTTP 401" in str(info.value)


def test_illegal_header_value_is_redacted() -> None:
    """A key httpx refuses as a header (a trailing newline) is not quoted in the error."""
    key = "sk-newline-secret-0003\n"
    config = ChatConfig("http://127.0.0.1:9/v1", "m", api_key_env="K", max_retries=0, timeout=5)
    client = ChatClient(config, environ={"K": key})
    with pytest.raises(ProviderError) as info:
        client.complete({"messages": [{"role": "user", "content": "hi"}]})
    assert "newline-secret" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("Authorization: Bearer abc.DEF-123", "abc.DEF-123"),
        ('{"auth": "bearer xyz789tok"}', "xyz789tok"),
        ("key sk-proj-AbCdEf123456 rejected", "AbCdEf123456"),
        ("https://user:pa55word@host/v1", "pa55word"),
        ('{"api_key": "zz-9988-secret"}', "zz-9988-secret"),
        ("x-api-key: anthropic-key-1", "anthropic-key-1"),
    ],
)
def test_redact_patterns(text: str, gone: str) -> None:
    """Bearer tokens, sk- keys, URL passwords and api_key fields are redacted."""
    assert gone not in redact(text)
    assert REDACTED in redact(text)


def test_redact_exact_secret_and_leaves_words() -> None:
    """The given secret goes wherever it is; short values and ordinary text stay."""
    assert redact("a plainsecretvalue b", ["plainsecretvalue"]) == f"a {REDACTED} b"
    assert redact("the cat sat", ["cat"]) == "the cat sat"


def test_key_pasted_as_variable_name_is_not_echoed(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key given to --api-key-env by mistake is refused without being printed."""
    key = "sk-pasted-by-mistake-0004"
    argv = ["compact", str(log), "--force", "--summarizer", "openai", "--base-url",
            "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env", key]  # fmt: skip
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert key not in out + err
    assert "--api-key-env takes the NAME of an environment variable" in err
