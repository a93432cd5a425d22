"""The importers' entry points, pinned on small hand-written transcripts (issue 25, part G).

`scripts/mutate --group importer-entry` mutates `compaction/importers/__init__.py` (`load`,
`import_transcript`, `import_to_store`, `_refuse_existing`, `_progress`) against these tests and
the importer table's, so a mutant that changes an imported event, a seq, the report's counts or
what the store holds is caught in seconds, without the real transcripts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction.errors import ConfigError, TranscriptError
from compaction.events import Event
from compaction.importers import ImportReport, import_to_store, import_transcript, load
from compaction.stores import open_store, read_events
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
            assert "no such file" in str(err.value)

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
        assert "the output session already exists" in str(err.value)
        assert "--session" in str(err.value)
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
            assert "would replace the transcript itself" in str(err.value)
        assert src.read_bytes() == before

    def test_an_existing_log_is_refused_unless_forced(self, tmp_path: Path) -> None:
        src = transcript(tmp_path, turns=2)
        out = tmp_path / "out.jsonl"
        out.write_bytes(b"x")  # one byte, not a log: still refused
        with pytest.raises(TranscriptError) as err:
            import_transcript(src, out)
        assert "the output log already exists" in str(err.value)
        assert "--force" in str(err.value)
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
        assert "holds no session events when read as openai" in str(err.value)
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
