"""The importers' entry points, pinned on small hand-written transcripts (issue 25, part G).

`scripts/mutate --group importer-entry` mutates `compaction/importers/__init__.py` (`load`,
`import_transcript`, `import_to_store`, `_refuse_existing`, `_progress`) against these tests and
the importer table's, so a mutant that changes an imported event, a seq, the report's counts or
what the store holds is caught in seconds, without the real transcripts.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from compaction.compactor.compact import CompactionPolicy, maybe_compact
from compaction.errors import CompactionError, ConfigError, TranscriptError
from compaction.events import CheckpointData, Event
from compaction.importers import (
    FORMATS,
    ImportReport,
    RuleBreak,
    import_to_store,
    import_transcript,
    importer,
    load,
    replay,
)
from compaction.session import Session
from compaction.stores import open_session_store, open_store, read_events
from compaction.stores.log_reader import BadLine
from compaction.summarizers import ExtractiveSummarizer
from compaction.tokens import get_tokenizer


def transcript(tmp_path: Path, turns: int = 1, name: str = "t.jsonl") -> Path:
    """An OpenAI messages transcript of `turns` user/assistant pairs: 4 * turns - 1 events."""
    path = tmp_path / name
    lines = []
    for n in range(turns):
        lines.append(json.dumps({"role": "user", "content": f"request {n}"}))
        lines.append(json.dumps({"role": "assistant", "content": f"answer {n}"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def shape(events: list[Event]) -> list[tuple[int, str]]:
    return [(e.seq, e.type) for e in events]


ONE_TURN = [(1, "turn/start"), (2, "message"), (3, "message")]


class TestLoad:
    def test_streams_the_events_and_fills_the_report(self, tmp_path: Path) -> None:
        report = ImportReport(path="given")
        events = list(load(transcript(tmp_path), report=report))
        assert shape(events) == ONE_TURN
        assert report.path == "given"
        assert report.format == "openai"
        assert (report.events, report.records, report.lines) == (3, 2, 2)
        assert report.tokenizer == "tiktoken:o200k_base"

    def test_a_named_format_is_used_not_detected(self, tmp_path: Path) -> None:
        report = ImportReport(path="x")
        list(load(transcript(tmp_path), "openai", report=report))
        assert report.format == "openai"
        with pytest.raises(TranscriptError):
            list(load(transcript(tmp_path), "gemini", report=ImportReport(path="x")))

    def test_the_tokenizer_given_counts(self, tmp_path: Path) -> None:
        report = ImportReport(path="x")
        list(load(transcript(tmp_path), report=report, tokenizer=get_tokenizer("cl100k_base")))
        assert report.tokenizer == "tiktoken:cl100k_base"

    def test_an_unknown_format_is_one_clear_error(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError) as err:
            load(transcript(tmp_path), "word")
        assert str(err.value) == (
            "format must be one of auto, claude-code, codex, gemini, openai, swe-agent, not 'word'"
        )

    def test_a_missing_file_or_a_folder_is_refused(self, tmp_path: Path) -> None:
        for path in (tmp_path / "missing.jsonl", tmp_path):
            with pytest.raises(TranscriptError) as err:
                load(path)
            assert err.value.path == str(path)
            assert err.value.line is None
            assert str(err.value) == f"{path}: no such file"

    def test_strict_is_passed_on(self, tmp_path: Path) -> None:
        path = transcript(tmp_path)
        path.write_text(path.read_text(encoding="utf-8") + "{broken\n", encoding="utf-8")
        report = ImportReport(path="x")
        assert shape(list(load(path, "openai", report=report))) == ONE_TURN
        assert [b.line for b in report.broken_lines] == [3]
        with pytest.raises(TranscriptError):
            list(load(path, "openai", strict=True))


class TestImportTranscript:
    def test_writes_the_loaded_events_to_a_new_log(self, tmp_path: Path) -> None:
        src = transcript(tmp_path, turns=2)
        out = tmp_path / "out.jsonl"
        report = import_transcript(src, out)
        written = list(read_events(out))
        assert [e.model_dump() for e in written] == [e.model_dump() for e in load(src)]
        assert [e.seq for e in written] == list(range(1, 8))
        assert report.path == str(src)
        assert (report.format, report.events, report.records) == ("openai", 7, 4)

    def test_a_sql_store_needs_the_session_and_holds_the_import(self, tmp_path: Path) -> None:
        url = f"sqlite:///{tmp_path / 's.db'}"
        src = transcript(tmp_path)
        with pytest.raises(ConfigError):
            import_transcript(src, url)
        report = import_transcript(src, url, session="one")
        store = open_store(url)
        try:
            assert shape(list(store.read("one"))) == ONE_TURN
            assert [(i.session, i.events) for i in store.sessions()] == [("one", 3)]
        finally:
            store.close()
        assert report.events == 3

    def test_an_existing_sql_session_is_refused_unless_forced(self, tmp_path: Path) -> None:
        url = f"sqlite:///{tmp_path / 's.db'}"
        import_transcript(transcript(tmp_path), url, session="one")
        bigger = transcript(tmp_path, turns=2, name="big.jsonl")
        with pytest.raises(TranscriptError) as err:
            import_transcript(bigger, url, session="one")
        assert err.value.path == f"{url}#one"
        assert str(err.value) == (
            f"{url}#one: the output session already exists. Choose a new --session, or pass --force"
        )
        import_transcript(bigger, url, session="two")  # another session is free
        report = import_transcript(bigger, url, session="one", overwrite=True)
        assert report.events == 7
        store = open_store(url)
        try:
            assert store.last_seq("one") == 7
        finally:
            store.close()

    def test_the_transcript_itself_is_never_the_output(self, tmp_path: Path) -> None:
        src = transcript(tmp_path)
        before = src.read_bytes()
        for overwrite in (False, True):
            with pytest.raises(TranscriptError) as err:
                import_transcript(src, tmp_path / "." / "t.jsonl", overwrite=overwrite)
            assert err.value.path == str(src)  # the output, named as its store names it
            assert str(err.value) == f"{src}: the output log would replace the transcript itself"
        assert src.read_bytes() == before

    def test_an_existing_log_is_refused_unless_forced(self, tmp_path: Path) -> None:
        src = transcript(tmp_path, turns=2)
        out = tmp_path / "out.jsonl"
        out.write_bytes(b"x")  # one byte, not a log: still refused
        with pytest.raises(TranscriptError) as err:
            import_transcript(src, out)
        assert err.value.path == str(out)
        assert str(err.value) == (
            f"{out}: the output log already exists. Choose a new path, or pass --force"
        )
        assert out.read_bytes() == b"x"
        assert import_transcript(src, out, overwrite=True).events == 7
        assert len(list(read_events(out))) == 7

    def test_an_empty_existing_file_is_written(self, tmp_path: Path) -> None:
        out = tmp_path / "out.jsonl"
        out.write_bytes(b"")
        assert import_transcript(transcript(tmp_path), out).events == 3
        assert shape(list(read_events(out))) == ONE_TURN

    def test_zero_events_is_an_error_and_writes_nothing(self, tmp_path: Path) -> None:
        src = tmp_path / "t.jsonl"
        src.write_text(
            json.dumps({"role": "tool", "tool_call_id": "c1", "content": "r"}) + "\n",
            encoding="utf-8",
        )
        out = tmp_path / "out.jsonl"
        with pytest.raises(TranscriptError) as err:
            import_transcript(src, out, "openai")
        assert err.value.path == str(src)
        assert str(err.value) == (
            f"{src}: the transcript holds no session events when read as openai. "
            "Check the file, or name its format (harness import FORMAT FILE)"
        )
        assert not out.exists()

    def test_strict_and_tokenizer_are_passed_on(self, tmp_path: Path) -> None:
        src = transcript(tmp_path)
        src.write_text(src.read_text(encoding="utf-8") + "{broken\n", encoding="utf-8")
        with pytest.raises(TranscriptError):
            import_transcript(src, tmp_path / "a.jsonl", "openai", strict=True)
        assert not (tmp_path / "a.jsonl").exists()
        report = import_transcript(
            src, tmp_path / "b.jsonl", "openai", tokenizer=get_tokenizer("cl100k_base")
        )
        assert report.tokenizer == "tiktoken:cl100k_base"
        assert [b.line for b in report.broken_lines] == [3]


class TestProgress:
    def test_called_after_every_batch_of_512_events(self, tmp_path: Path) -> None:
        src = transcript(tmp_path, turns=300)  # 1,199 events: two whole batches
        seen: list[tuple[int, int]] = []
        report = import_transcript(
            src, tmp_path / "out.jsonl", on_progress=lambda r: seen.append((r.events, r.lines))
        )
        assert report.events == 1199
        # Event 512 is turn 128's `turn/end`, read with the next request's `turn/start` and
        # message (events 513, 514): the report has counted those when the 512th is written.
        assert [events for events, _ in seen] == [514, 1026]
        assert all(0 < lines <= 600 for _, lines in seen)

    def test_no_call_below_one_batch(self, tmp_path: Path) -> None:
        seen: list[ImportReport] = []
        import_transcript(
            transcript(tmp_path, turns=128), tmp_path / "o.jsonl", on_progress=seen.append
        )
        assert seen == []

    def test_the_store_form_reports_progress_too(self, tmp_path: Path) -> None:
        store = open_store(f"sqlite:///{tmp_path / 's.db'}")
        seen: list[int] = []
        try:
            report = import_to_store(
                transcript(tmp_path, turns=129),
                store,
                "one",
                on_progress=lambda r: seen.append(r.events),
            )
            assert store.last_seq("one") == 515
        finally:
            store.close()
        assert report.events == 515
        assert seen == [514]


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def small_claude() -> list[Event]:
    """The Claude Code fixture: 38 events, a todo list, the agent's own checkpoint at seq 14."""
    return list(load(FIXTURES / "claude_code_small.jsonl"))


class TestReplay:
    def test_every_event_is_appended_in_order(self, tmp_path: Path) -> None:
        events = small_claude()
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay(events, session, CompactionPolicy(window_tokens=100_000))
            written = list(session.events())
        assert report.compactions == []
        assert report.refused == Counter()
        assert report.recorded_checkpoints == 1
        assert [e.seq for e in written] == list(range(1, 39))
        for old, new in zip(events, written, strict=True):
            if isinstance(old.data, CheckpointData):
                assert isinstance(new.data, CheckpointData)
                assert (new.data.first_seq, new.data.last_seq) == (1, 13)
                assert new.data.text == old.data.text
            else:
                assert new.data == old.data

    def test_the_peak_is_the_largest_context_after_any_event(self, tmp_path: Path) -> None:
        events = small_claude()
        peak = 0
        with Session(tmp_path / "by-hand.jsonl", sync="batch") as session:
            for event in events[:13]:  # before the recorded checkpoint shrinks the context
                session.append(event.data)
                peak = max(peak, session.context_tokens)
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay(events[:13], session, CompactionPolicy(window_tokens=100_000))
            assert report.peak_context_tokens == peak == session.context_tokens > 0

    def test_a_recorded_checkpoint_with_nothing_before_it_is_dropped(self, tmp_path: Path) -> None:
        events = small_claude()
        checkpoint = events[13]
        assert isinstance(checkpoint.data, CheckpointData)
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay(
                [checkpoint, *events[:2]], session, CompactionPolicy(window_tokens=10**5)
            )
            written = list(session.events())
        assert report.recorded_checkpoints == 0
        assert [e.data for e in written] == [events[0].data, events[1].data]

    def test_a_second_recorded_checkpoint_spans_from_the_first(self, tmp_path: Path) -> None:
        events = small_claude()
        again = [*events[:14], *events[1:13], events[13]]  # the agent compacts twice
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay(again, session, CompactionPolicy(window_tokens=100_000))
            spans = [
                (e.data.first_seq, e.data.last_seq)
                for e in session.events()
                if isinstance(e.data, CheckpointData)
            ]
        assert report.recorded_checkpoints == 2
        # The second span starts right after the first span (seq 14, the first checkpoint itself).
        assert spans == [(1, 13), (14, 26)]

    def test_each_compaction_keeps_the_unfinished_items_at_its_cut(self, tmp_path: Path) -> None:
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay(small_claude(), session, CompactionPolicy(window_tokens=300))
            cuts = [e for e in session.events() if isinstance(e.data, CheckpointData)]
        assert len(report.compactions) >= 2
        assert len(cuts) == len(report.compactions) + report.recorded_checkpoints
        for c in report.compactions:
            assert c.unfinished == (c.result.data.pending, c.result.data.current)
        assert any(c.unfinished != ((), ()) for c in report.compactions)
        assert sum(report.refused.values()) > 0


class TestArgumentsPassedOn:
    def test_the_named_format_reaches_the_reader(self, tmp_path: Path) -> None:
        """An OpenAI file named as Gemini is read as Gemini (and refused), not detected."""
        with pytest.raises(TranscriptError):
            import_transcript(transcript(tmp_path), tmp_path / "o.jsonl", "gemini")
        assert not (tmp_path / "o.jsonl").exists()

    def test_the_store_form_defaults_to_lenient_and_no_overwrite(self, tmp_path: Path) -> None:
        src = transcript(tmp_path)
        src.write_text(src.read_text(encoding="utf-8") + "{broken\n", encoding="utf-8")
        store = open_store(f"sqlite:///{tmp_path / 's.db'}")
        try:
            report = import_to_store(src, store, "one")  # not strict: the line is skipped
            assert [b.line for b in report.broken_lines] == [3]
            with pytest.raises(TranscriptError):  # not overwrite: the session is kept
                import_to_store(transcript(tmp_path, 2, "b.jsonl"), store, "one")
            assert store.last_seq("one") == 3
        finally:
            store.close()

    def test_the_output_store_is_opened_for_batched_sync(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An import syncs once when it commits, not after every event (`sync="batch"`)."""
        seen: list[object] = []
        real = open_session_store

        def spy(target: str | Path, session: str | None = None, **kwargs: Any) -> Any:
            seen.append(kwargs.get("sync"))
            return real(target, session, **kwargs)

        monkeypatch.setattr("compaction.importers.open_session_store", spy)
        import_transcript(transcript(tmp_path), tmp_path / "o.jsonl")
        assert seen == ["batch"]


class TestReplayCalls:
    def test_a_checkpoint_after_one_event_spans_that_event(self, tmp_path: Path) -> None:
        events = small_claude()
        with Session(tmp_path / "r.jsonl", sync="batch") as session:
            report = replay([events[0], events[13]], session, CompactionPolicy(window_tokens=10**5))
            spans = [
                (e.data.first_seq, e.data.last_seq)
                for e in session.events()
                if isinstance(e.data, CheckpointData)
            ]
        assert report.recorded_checkpoints == 1
        assert spans == [(1, 1)]

    def test_each_compaction_check_gets_the_summarizer_and_fixed_tokens(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`maybe_compact` is asked after every event, with the replay's summarizer and budget."""
        asked: list[tuple[object, int]] = []
        refusals: Counter[str] = Counter()
        real = maybe_compact

        def spy(session: Session, policy: CompactionPolicy, **kwargs: Any) -> Any:
            asked.append((kwargs.get("summarizer"), kwargs.get("fixed_tokens", 0)))
            try:
                return real(session, policy, **kwargs)
            except CompactionError as exc:
                refusals[exc.code] += 1
                raise

        monkeypatch.setattr("compaction.importers.session_replay.maybe_compact", spy)
        summarizer = ExtractiveSummarizer()
        events = small_claude()
        with Session(tmp_path / "a.jsonl", sync="batch") as session:
            report = replay(events, session, CompactionPolicy(window_tokens=300))
        assert asked == [(None, 0)] * len(events)
        assert report.refused == refusals
        assert max(refusals.values()) > 1  # counted, not just flagged
        asked.clear()
        with Session(tmp_path / "b.jsonl", sync="batch") as session:
            replay(
                events,
                session,
                CompactionPolicy(window_tokens=300),
                summarizer=summarizer,
                fixed_tokens=77,
            )
        assert asked == [(summarizer, 77)] * len(events)

    def test_fixed_tokens_count_in_the_budget(self, tmp_path: Path) -> None:
        events = small_claude()[:13]
        policy = CompactionPolicy(window_tokens=100_000)
        with Session(tmp_path / "a.jsonl", sync="batch") as session:
            assert replay(events, session, policy).compactions == []
        with Session(tmp_path / "b.jsonl", sync="batch") as session:
            assert replay(events, session, policy, fixed_tokens=99_000).compactions != []


class TestReport:
    def test_skip_counts_one_by_default_and_adds_up(self) -> None:
        report = ImportReport(path="x")
        report.skip("unknown record")
        report.skip("unknown record", 3)
        report.skip("image block", 2)
        assert report.skipped == Counter({"unknown record": 4, "image block": 2})

    def test_as_dict_holds_every_field_and_sorts_the_counters(self) -> None:
        report = ImportReport(
            path="t.jsonl",
            format="codex",
            lines=11,
            records=12,
            events=13,
            events_by_type=Counter({"turn/start": 2, "message": 9}),
            turns=2,
            tool_calls=3,
            unanswered_calls=1,
            orphan_results=4,
            todo_writes=5,
            rule_breaking_lists=[RuleBreak(seq=7, violations=["two in progress"])],
            checkpoints=6,
            handled=Counter({"user request": 2, "assistant message": 3}),
            skipped=Counter({"z": 1, "a": 2}),
            broken_lines=[BadLine(line=8, reason="not JSON")],
            torn_line=10,
            glued_lines=[9],
            largest_tool_output=14,
            tokenizer="tiktoken:o200k_base",
            total_tokens=15,
            context_tokens=16,
        )
        data = report.as_dict()
        assert data == {
            "path": "t.jsonl",
            "format": "codex",
            "lines": 11,
            "records": 12,
            "events": 13,
            "events_by_type": {"message": 9, "turn/start": 2},
            "turns": 2,
            "tool_calls": 3,
            "unanswered_calls": 1,
            "orphan_results": 4,
            "todo_writes": 5,
            "rule_breaking_lists": [{"seq": 7, "violations": ["two in progress"]}],
            "checkpoints": 6,
            "handled": {"assistant message": 3, "user request": 2},
            "skipped": {"a": 2, "z": 1},
            "broken_lines": [{"line": 8, "reason": "not JSON"}],
            "torn_line": 10,
            "glued_lines": [9],
            "largest_tool_output": 14,
            "tokenizer": "tiktoken:o200k_base",
            "total_tokens": 15,
            "context_tokens": 16,
        }
        assert list(data) == [f.name for f in fields(ImportReport)]  # the fields' order
        for key in ("events_by_type", "handled", "skipped"):
            assert list(data[key]) == sorted(data[key])
        assert json.loads(json.dumps(data)) == data


class TestFormatTable:
    def test_an_unknown_name_raises_key_error_naming_it(self) -> None:
        with pytest.raises(KeyError) as err:
            importer("auto")
        assert err.value.args == ("auto",)
        assert [importer(name).name for name in FORMATS] == list(FORMATS)
