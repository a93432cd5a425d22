"""Recorded counts: a checkpoint carries the context's count, so a reopen needs no tokenizer.

The oracle is a reopen that counts every event (a `Session` given a tokenizer counts as it
folds, never reading a record): whatever the log records, `context_tokens` must equal it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compaction import (
    CheckpointData,
    CompactionPolicy,
    Message,
    Session,
    compact,
    compaction_due,
    get_tokenizer,
)
from compaction.events import CheckpointRecorded, CountedContext, RetractData
from compaction.session import live_views
from compaction.tokens import TiktokenTokenizer, Tokenizer, tokenizer_name
from compaction.views import UsageProjection, _usage_view

REQUESTS = [Message(role="system", content="You are terse.")] + [
    Message(role="user" if i % 2 == 0 else "assistant", content=f"step {i}: " + "words " * 40)
    for i in range(40)
]


def write(log: Path, tokenizer: Tokenizer | None = None) -> int:
    """Append the requests and compact; return the context's count then."""
    with Session(log, tokenizer=tokenizer) as s:
        s.append_many(REQUESTS)
        compact(s, CompactionPolicy(), force=True)
        return s.context_tokens


def full_count(log: Path) -> int:
    """Count the log's context from every event, never reading a record."""
    with Session(log, tokenizer=TiktokenTokenizer()) as s:
        return s.context_tokens


def checkpoint(log: Path) -> CheckpointData:
    with Session(log, tokenizer=TiktokenTokenizer()) as s:
        found = [e.data for e in s.events() if isinstance(e, CheckpointRecorded)]
    return found[-1]


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every load of the default tokenizer by a session (the views' lazy load)."""
    seen: list[str] = []

    def load(name: str = "o200k_base") -> Tokenizer:
        seen.append(name)
        return get_tokenizer(name)

    monkeypatch.setattr(_usage_view, "get_tokenizer", load)
    monkeypatch.setattr(live_views, "get_tokenizer", load)
    return seen


def edit_checkpoint(log: Path, **counted: object) -> None:
    """Rewrite the checkpoint line's record (None: remove it), as an older or hostile writer."""
    lines = log.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event["type"] == "compaction/checkpoint":
            if counted.pop("remove", False):
                del event["data"]["counted"]
            event["data"].update(counted.pop("data", {}))
            event["data"].get("counted", {}).update(counted)
            lines[i] = json.dumps(event, separators=(",", ":"))
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")


class TestRecord:
    def test_compact_records_the_count_and_the_tokenizer(self, log_path: Path) -> None:
        """The checkpoint `compact` appends names the tokenizer and the context's count after it."""
        tokens = write(log_path)
        data = checkpoint(log_path)
        assert data.counted == CountedContext(tokenizer="tiktoken:o200k_base", tokens=tokens)
        assert data.tokens_after == tokens

    def test_the_record_names_the_sessions_tokenizer(self, log_path: Path) -> None:
        """A session counting with another tokenizer records its name and its count."""
        tokens = write(log_path, TiktokenTokenizer("cl100k_base"))
        assert checkpoint(log_path).counted == CountedContext(
            tokenizer="tiktoken:cl100k_base", tokens=tokens
        )

    def test_the_same_history_writes_the_same_bytes(self, tmp_path: Path) -> None:
        """Two sessions that append the same events and compact write byte-identical logs."""
        a, b = tmp_path / "a" / "s.jsonl", tmp_path / "b" / "s.jsonl"
        a.parent.mkdir()
        b.parent.mkdir()
        write(a)
        write(b, TiktokenTokenizer())
        # The checkpoint names its log by path: the same name in two folders, run from each.
        assert a.read_bytes().replace(b"/a/", b"/b/") == b.read_bytes()

    @pytest.mark.parametrize("how", ["no expected seq", "after another event"])
    def test_only_a_checkpoint_known_to_come_next_is_counted(
        self, log_path: Path, how: str
    ) -> None:
        """Without `expected_seq` equal to the applied seq, or behind another event, no record."""
        with Session(log_path) as s:
            s.append_many(REQUESTS)
            data = CheckpointData(
                text="## Summary\nsome", first_seq=2, last_seq=30, tokens_before=9,
                tokens_after=9, summarizer="test",
            )  # fmt: skip
            if how == "no expected seq":
                event = s.append(data)
            else:
                event = s.append_many([Message(role="user", content="x"), data], expected_seq=41)[1]
        assert isinstance(event, CheckpointRecorded)
        assert event.data.counted is None

    def test_a_checkpoint_appended_next_by_hand_is_counted_too(self, log_path: Path) -> None:
        """A host's own checkpoint appended with the applied seq records the session's count."""
        with Session(log_path) as s:
            s.append_many(REQUESTS)
            data = CheckpointData(
                text="## Summary\nsome", first_seq=2, last_seq=30, tokens_before=9,
                tokens_after=9, summarizer="test",
            )  # fmt: skip
            event = s.append(data, expected_seq=s.applied_seq)
            assert isinstance(event, CheckpointRecorded)
            assert event.data.counted == CountedContext(
                tokenizer=tokenizer_name(), tokens=s.context_tokens
            )


class TestReopen:
    def test_a_log_that_ends_in_a_compaction_reopens_without_a_tokenizer(
        self, log_path: Path, loads: list[str]
    ) -> None:
        """`context_tokens` comes from the record; the usage view still loads one when read."""
        tokens = write(log_path)
        loads.clear()
        with Session(log_path) as again:
            assert again.context_tokens == tokens
            assert loads == []
            assert again.usage.context_tokens == tokens
        assert loads == ["o200k_base"]
        assert full_count(log_path) == tokens

    def test_messages_after_the_record_are_counted_alone(
        self, log_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Only the messages after the record are counted; the usage view is not built."""
        write(log_path)
        with Session(log_path) as s:
            s.append_many([Message(role="user", content="one more"), REQUESTS[0]])
        applied: list[object] = []
        apply = UsageProjection.apply

        def spy(self: UsageProjection, state: object, event: object) -> object:
            applied.append(event)
            return apply(self, state, event)  # type: ignore[arg-type]

        monkeypatch.setattr(UsageProjection, "apply", spy)
        with Session(log_path) as again:
            got = again.context_tokens
            assert not compaction_due(again, CompactionPolicy())  # maybe_compact's check
            assert applied == []
            assert again.tokenizer_name == "tiktoken:o200k_base"
        assert got == full_count(log_path)

    def test_an_old_log_without_records_reopens_as_before(
        self, log_path: Path, loads: list[str]
    ) -> None:
        """A checkpoint written before records: the same count, made by the tokenizer."""
        tokens = write(log_path)
        edit_checkpoint(log_path, remove=True)
        assert checkpoint(log_path).counted is None
        loads.clear()
        with Session(log_path) as again:
            assert again.context_tokens == tokens
        assert loads == ["o200k_base"]

    def test_a_record_of_another_tokenizer_is_not_used(
        self, log_path: Path, loads: list[str]
    ) -> None:
        """A record made by cl100k_base is not read by an o200k_base session: it counts."""
        write(log_path, TiktokenTokenizer("cl100k_base"))
        loads.clear()
        with Session(log_path) as again:
            got = again.context_tokens
        assert loads == ["o200k_base"]
        assert got == full_count(log_path)

    def test_a_retraction_after_the_record_counts_the_log(
        self, log_path: Path, loads: list[str]
    ) -> None:
        """A message taken out after the record: the usage view counts every event."""
        write(log_path)
        with Session(log_path) as s:
            s.append(RetractData(seqs=(s.context.seqs[-1],), reason="pop"))
        loads.clear()
        with Session(log_path) as again:
            got = again.context_tokens
        assert loads == ["o200k_base"]
        assert got == full_count(log_path)

    def test_a_later_checkpoint_without_a_record_ends_the_earlier_one(
        self, log_path: Path, loads: list[str]
    ) -> None:
        """The newest checkpoint decides: one without a record is counted, not the older one's."""
        write(log_path)
        with Session(log_path) as s:
            s.append_many(REQUESTS[1:])
            compact(s, CompactionPolicy(), force=True)
        lines = log_path.read_text(encoding="utf-8").splitlines()
        last = json.loads(lines[-1])
        del last["data"]["counted"]
        lines[-1] = json.dumps(last, separators=(",", ":"))
        log_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        loads.clear()
        with Session(log_path) as again:
            got = again.context_tokens
        assert loads == ["o200k_base"]
        assert got == full_count(log_path)


def test_a_fresh_process_reopens_without_importing_tiktoken(log_path: Path) -> None:
    """In a new interpreter, reading the context and its count never imports tiktoken."""
    tokens = write(log_path)
    script = (
        "import sys\nfrom compaction import Session\n"
        "with Session(sys.argv[1]) as s:\n"
        "    print(s.context_tokens, len(s.context.messages), 'tiktoken' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(log_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    count, messages, imported = done.stdout.split()
    assert (int(count), imported) == (tokens, "False")
    assert int(messages) > 1
