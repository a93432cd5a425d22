"""Provider backends never leak the API key or an opaque item into an error, an event or a log."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction import CompactionPolicy, Session, compact
from compaction.backends import BackendConfig, CompactionBackend
from compaction.backends.base import REASON_LIMIT
from harness.testing import Reply, StubModel
from prompts import compaction_backend

KEY = "sk-live-abcdefghijklmnopqrstuvwx"
ITEM = "gAAAAB-opaque-encrypted-state-0123456789"
POLICY = CompactionPolicy(window_tokens=4000, retain=0.1)


def filled(session: Session) -> None:
    """A turn long enough to compact, with an unfinished todo."""
    session.start_turn("Refactor the module")
    session.todo_write({"todos": [{"content": "Split the module", "status": "in_progress"}]})
    for i in range(6):
        session.add_message({"role": "user", "content": f"part {i} " + "text " * 60})
        session.add_message({"role": "assistant", "content": "noted " * 40})


def backend(stub: StubModel, name: str) -> CompactionBackend | None:
    root = stub.base_url if name == "openai-responses" else stub.root_url
    config = BackendConfig(
        base_url=root, model="m", api_key_env="LEAK_KEY", max_retries=0, compact_trigger=1
    )
    return compaction_backend(name, config)


HOSTILE = [
    pytest.param(Reply(status=401, body=f'{{"error": "bad key {KEY}"}}'.encode()), id="401-echo"),
    pytest.param(Reply(status=500, body=f"Authorization: Bearer {KEY}".encode()), id="500-bearer"),
    pytest.param(Reply(status=400, body=f'{{"echo": "{ITEM}"}}'.encode()), id="400-item-echo"),
    pytest.param(Reply(body=f"<html>{KEY} {ITEM}".encode()), id="garbage-echo"),
    pytest.param(Reply(status=502, body=("x" * 5000 + KEY).encode()), id="long-body"),
]


@pytest.mark.parametrize("name", ["openai-responses", "anthropic"])
@pytest.mark.parametrize("hostile", HOSTILE)
def test_no_key_or_item_in_the_reason_or_the_log(
    log_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, hostile: Reply
) -> None:
    """A hostile answer quoting the key or the previous item leaves neither in the event."""
    monkeypatch.setenv("LEAK_KEY", KEY)
    first = Reply(compaction=ITEM)
    with Session(log_path) as session, StubModel([first, hostile]) as stub:
        filled(session)
        compact(session, POLICY, force=True, backend=backend(stub, name))
        filled(session)
        result = compact(session, POLICY, force=True, backend=backend(stub, name))
    provider = result.data.provider
    assert provider is not None
    assert provider.item is None
    reason = provider.fallback_reason or ""
    assert KEY not in reason
    assert ITEM not in reason
    assert len(reason) <= REASON_LIMIT
    assert "\n" not in reason
    assert KEY.encode() not in log_path.read_bytes()
    sent = stub.requests[1]
    header = sent.headers.get("authorization") or sent.headers.get("x-api-key")
    assert header is not None
    assert KEY in header
