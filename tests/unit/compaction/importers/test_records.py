"""The raw record readers and format detection, pinned on hand-written files (issue 25, part D).

`scripts/mutate --group importer-readers` mutates `compaction/importers/_records.py` and
`compaction/importers/_detect.py`; these tests read small files written here and compare what
is yielded (line numbers, values) and what the report lists (broken, torn and glued lines,
repaired records) with values written out by hand, and the format each probe file is told as.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from compaction.errors import TranscriptError
from compaction.importers import ImportReport
from compaction.importers._detect import detect_format
from compaction.importers._records import (
    DEEP,
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    REPAIRED,
    _lines,
    iter_json_array,
    iter_jsonl,
    load_document,
    read_document_bytes,
    repair_surrogates,
    too_deep,
)
from compaction.stores.log_reader import BadLine

STRICT_FIX = "Fix or remove that line, or import without --strict to count and skip it"


def _file(tmp_path: Path, data: bytes | str, name: str = "t.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def _jsonl(tmp_path: Path, data: bytes | str) -> tuple[list[tuple[int, Any]], ImportReport]:
    path = _file(tmp_path, data)
    report = ImportReport(path=str(path))
    return list(iter_jsonl(path, report, strict=False)), report


def _array(tmp_path: Path, data: str) -> tuple[list[tuple[int, Any]], ImportReport]:
    path = _file(tmp_path, data, "t.json")
    report = ImportReport(path=str(path))
    return list(iter_json_array(path, report, strict=False)), report


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


class TestJsonLines:
    def test_values_come_with_their_line_numbers(self, tmp_path: Path) -> None:
        """Blank lines are counted as lines and skipped; padding and CRLF are ignored."""
        values, report = _jsonl(tmp_path, '{"a": 1}\n\n  \t\n  {"b": 2}  \r\n[3]\n')
        assert values == [(1, {"a": 1}), (4, {"b": 2}), (5, [3])]
        assert (report.lines, report.records) == (5, 3)
        assert (report.broken_lines, report.torn_line, report.glued_lines) == ([], None, [])

    def test_glued_objects_are_each_read(self, tmp_path: Path) -> None:
        """Two or three values on one line are all yielded, and the line is listed."""
        values, report = _jsonl(tmp_path, '{"a": 1}\n{"b": 2}{"c": 3} \t {"d": 4}\n"e"\n')
        assert values == [(1, {"a": 1}), (2, {"b": 2}), (2, {"c": 3}), (2, {"d": 4}), (3, "e")]
        assert report.glued_lines == [2]
        assert report.records == 5

    def test_a_broken_line_is_listed_and_the_rest_read(self, tmp_path: Path) -> None:
        """The values before the damage are yielded; the line is listed with its column."""
        values, report = _jsonl(tmp_path, '{"a": 1}\n{"b": 2} nope\nnot json\n{"c": 3}\n')
        assert values == [(1, {"a": 1}), (2, {"b": 2}), (4, {"c": 3})]
        assert report.broken_lines == [
            BadLine(2, "not JSON at column 10: Expecting value"),
            BadLine(3, "not JSON at column 1: Expecting value"),
        ]
        assert report.torn_line is None

    def test_a_cut_off_last_line_is_torn(self, tmp_path: Path) -> None:
        """A last line without its newline that does not parse is the torn line, not broken."""
        values, report = _jsonl(tmp_path, '{"a": 1}\n{"b": ')
        assert values == [(1, {"a": 1})]
        assert (report.torn_line, report.broken_lines) == (2, [])

    def test_a_damaged_last_line_with_its_newline_is_broken(self, tmp_path: Path) -> None:
        """A bad last line that ends with a newline was written whole: it is broken."""
        _, report = _jsonl(tmp_path, '{"a": 1}\n{"b": \n')
        assert report.torn_line is None
        assert [b.line for b in report.broken_lines] == [2]

    def test_a_last_line_without_newline_that_parses_is_read(self, tmp_path: Path) -> None:
        """A complete last record without its newline is a record."""
        values, report = _jsonl(tmp_path, '{"a": 1}\n{"b": 2}')
        assert values == [(1, {"a": 1}), (2, {"b": 2})]
        assert report.torn_line is None

    def test_strict_refuses_a_broken_line(self, tmp_path: Path) -> None:
        """With strict, a broken line raises, naming the file, the line and the fix."""
        path = _file(tmp_path, '{"a": 1}\nnope\n')
        with pytest.raises(TranscriptError) as caught:
            list(iter_jsonl(path, ImportReport(path=str(path)), strict=True))
        assert str(caught.value) == (
            f"{path}:2: not JSON at column 1: Expecting value. {STRICT_FIX}"
        )

    def test_strict_refuses_a_torn_line(self, tmp_path: Path) -> None:
        """With strict, a cut-off last line raises as truncated, naming the error."""
        path = _file(tmp_path, '{"a": 1}\n{"b"')
        report = ImportReport(path=str(path))
        with pytest.raises(TranscriptError) as caught:
            list(iter_jsonl(path, report, strict=True))
        assert str(caught.value) == (
            f"{path}:2: truncated last line (not JSON at column 5: Expecting ':' delimiter)"
        )
        assert report.torn_line is None

    @pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
    def test_a_line_nested_too_deep_is_broken(self, tmp_path: Path, depth: int) -> None:
        """Nesting past the limit (or past Python's recursion limit) is a broken line."""
        values, report = _jsonl(tmp_path, f'{_nested(depth)}\n{{"a": 1}}\n')
        assert values == [(2, {"a": 1})]
        assert report.broken_lines == [BadLine(1, DEEP)]

    def test_nesting_at_the_limit_is_read(self, tmp_path: Path) -> None:
        """Exactly `MAX_DEPTH` levels are read."""
        values, _ = _jsonl(tmp_path, _nested(MAX_DEPTH) + "\n")
        assert len(values) == 1

    def test_lone_surrogates_are_replaced_and_counted(self, tmp_path: Path) -> None:
        """A lone surrogate escape, in a key or a value, becomes U+FFFD; pairs are kept."""
        values, report = _jsonl(
            tmp_path,
            '{"t": "cut \\ud83d", "\\uDC00k": ["\\ud83d\\ude00"]}\n'
            '{"t": "\\ud83d\\ude00"}\n'
            '{"t": "ok"}\n',
        )
        assert values == [
            (1, {"t": "cut \ufffd", "\ufffdk": ["\U0001f600"]}),
            (2, {"t": "\U0001f600"}),
            (3, {"t": "ok"}),
        ]
        assert dict(report.handled) == {REPAIRED: 1}

    def test_bytes_that_are_not_utf8_are_replaced(self, tmp_path: Path) -> None:
        """A line with invalid UTF-8 is read with U+FFFD in place of the bad bytes."""
        values, _ = _jsonl(tmp_path, b'{"t": "a\xffb"}\n')
        assert values == [(1, {"t": "a\ufffdb"})]

    def test_an_over_long_line_is_listed_unread(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A line over the limit is listed with the limit and skipped; the next line is read."""
        monkeypatch.setattr("compaction.importers._records.MAX_LINE_BYTES", 10)
        values, report = _jsonl(tmp_path, '{"a": 1}\n{"bb": 12345}\n{"c": 3}\n')
        assert values == [(1, {"a": 1}), (3, {"c": 3})]
        assert report.broken_lines == [BadLine(2, "line longer than 10 bytes (skipped unread)")]
        assert report.lines == 3

    def test_strict_refuses_an_over_long_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With strict, a line over the limit raises, naming the file and the line."""
        monkeypatch.setattr("compaction.importers._records.MAX_LINE_BYTES", 10)
        path = _file(tmp_path, '{"a": 1}\n{"bb": 12345}\n')
        with pytest.raises(TranscriptError) as caught:
            list(iter_jsonl(path, ImportReport(path=str(path)), strict=True))
        assert str(caught.value) == (
            f"{path}:2: line longer than 10 bytes (skipped unread). {STRICT_FIX}"
        )


class TestLines:
    @pytest.mark.parametrize(
        ("data", "lines"),
        [
            (b"abcd\nabcde\nab", [b"abcd\n", b"abcde\n", b"ab"]),
            (b"abcdef\nab\n", [None, b"ab\n"]),
            (b"abcde", [b"abcde"]),
            (b"abcdef", [None]),
            (b"", []),
            (b"\n\n", [b"\n", b"\n"]),
        ],
    )
    def test_a_line_over_the_limit_is_none(self, data: bytes, lines: list[bytes | None]) -> None:
        """Lines up to the limit (its newline not counted) are yielded; longer ones are None."""
        assert list(_lines(io.BytesIO(data), 5)) == lines

    def test_lines_longer_than_a_chunk(self) -> None:
        """A line read in several 1 MiB chunks is yielded whole; one past the limit is skipped."""
        mib = 1024 * 1024
        whole = b"a" * (2 * mib + 5) + b"\n"
        over = b"b" * (3 * mib + 1) + b"\n"
        data = whole + over + b"c\n" + b"d" * (3 * mib)
        assert list(_lines(io.BytesIO(data), 3 * mib)) == [whole, None, b"c\n", b"d" * (3 * mib)]

    def test_the_rest_of_an_over_long_line_is_skipped(self) -> None:
        """The chunks left of a line past the limit are read and dropped, not yielded."""
        mib = 1024 * 1024
        data = b"e" * (5 * mib + 3) + b"\nf\n"
        assert list(_lines(io.BytesIO(data), 3 * mib)) == [None, b"f\n"]


class TestJsonArray:
    def test_items_come_with_their_line_numbers(self, tmp_path: Path) -> None:
        """Each item is yielded with the line it starts on; lines are counted."""
        values, report = _array(tmp_path, ' \n[\n  {"a": 1},\n  {"b": 2}, {"c": 3}\n, 4]')
        assert values == [(3, {"a": 1}), (4, {"b": 2}), (4, {"c": 3}), (5, 4)]
        assert (report.lines, report.records, report.torn_line) == (5, 4, None)

    def test_lines_of_a_file_ending_with_a_newline(self, tmp_path: Path) -> None:
        """A final newline does not count as one more line."""
        values, report = _array(tmp_path, '[{"a": 1},\n{"b": 2}]\n')
        assert values == [(1, {"a": 1}), (2, {"b": 2})]
        assert report.lines == 2

    def test_an_empty_array_yields_nothing(self, tmp_path: Path) -> None:
        """`[]` holds no records and is not torn."""
        values, report = _array(tmp_path, "[ ]")
        assert values == []
        assert (report.torn_line, report.records) == (None, 0)

    @pytest.mark.parametrize(
        ("text", "values", "torn", "why"),
        [
            (
                '[{"a": 1},\n{"b": 2},\n',
                [(1, {"a": 1}), (2, {"b": 2})],
                2,
                "the array is not closed",
            ),
            ('[{"a": 1},\n{"b": 2}', [(1, {"a": 1}), (2, {"b": 2})], 2, "the array is not closed"),
            ('[{"a": 1},\n\n{"b": ', [(1, {"a": 1})], 3, "not JSON: Expecting value"),
        ],
    )
    def test_a_truncated_array_yields_what_came_before(
        self, tmp_path: Path, text: str, values: list[tuple[int, Any]], torn: int, why: str
    ) -> None:
        """Every item before the cut is read; the cut's line is the torn line."""
        got, report = _array(tmp_path, text)
        assert (got, report.torn_line) == (values, torn)
        path = tmp_path / "t.json"
        with pytest.raises(TranscriptError) as caught:
            list(iter_json_array(path, ImportReport(path=str(path)), strict=True))
        assert str(caught.value) == f"{path}:{torn}: truncated JSON array ({why}). {STRICT_FIX}"

    @pytest.mark.parametrize(
        ("text", "values", "torn"),
        [
            ('[{"a": 1}, X]', [(1, {"a": 1})], 1),
            ("[1,\n2\n\n", [(1, 1), (2, 2)], 3),
            ("\n[1,\n2", [(2, 1), (3, 2)], 3),
        ],
    )
    def test_the_torn_line_of_an_array(
        self, tmp_path: Path, text: str, values: list[tuple[int, Any]], torn: int
    ) -> None:
        """Junk after an item, blank lines at the end, a newline first: each line counted."""
        assert _array(tmp_path, text)[0] == values
        assert _array(tmp_path, text)[1].torn_line == torn

    def test_a_deep_item_names_its_own_line(self, tmp_path: Path) -> None:
        """The refusal names the line the deep item starts on, not the file's last."""
        path = _file(tmp_path, "\n[1,\n" + _nested(MAX_DEPTH + 1) + "\n]\n", "t.json")
        with pytest.raises(TranscriptError) as caught:
            list(iter_json_array(path, ImportReport(path=str(path)), strict=False))
        assert caught.value.line == 3

    @pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
    def test_an_item_nested_too_deep_is_refused(self, tmp_path: Path, depth: int) -> None:
        """An item past the depth limit (the array's own level not counted) stops the import."""
        path = _file(tmp_path, "[1,\n2, " + _nested(depth) + "]", "t.json")
        report = ImportReport(path=str(path))
        got: list[tuple[int, Any]] = []
        with pytest.raises(TranscriptError) as caught:
            got.extend(iter_json_array(path, report, strict=False))
        assert str(caught.value) == f"{path}:2: {DEEP}. {STRICT_FIX}"
        assert got == [(1, 1), (2, 2)]

    def test_an_item_at_the_depth_limit_is_read(self, tmp_path: Path) -> None:
        """An item of `MAX_DEPTH` levels is read."""
        values, _ = _array(tmp_path, "[" + _nested(MAX_DEPTH) + "]")
        assert len(values) == 1

    def test_lone_surrogates_in_items_are_replaced(self, tmp_path: Path) -> None:
        """Each item with a lone surrogate is repaired and counted; the others are untouched."""
        values, report = _array(tmp_path, '["\\ud83d", "\\ud83d\\ude00", "\\udfff", "x"]')
        assert [v for _, v in values] == ["\ufffd", "\U0001f600", "\ufffd", "x"]
        assert report.handled[REPAIRED] == 2


class TestDocuments:
    def test_a_document_is_read_whole(self, tmp_path: Path) -> None:
        """One JSON object is returned as it is."""
        path = _file(tmp_path, '{"history": [1, {"a": "b"}]}', "t.json")
        assert load_document(path) == {"history": [1, {"a": "b"}]}

    def test_lone_surrogates_in_a_document_are_replaced(self, tmp_path: Path) -> None:
        """A lone surrogate in a key or a value becomes U+FFFD."""
        path = _file(tmp_path, '{"\\ud800": ["\\udc00x"]}', "t.json")
        assert load_document(path) == {"\ufffd": ["\ufffdx"]}

    def test_a_truncated_document_names_its_line(self, tmp_path: Path) -> None:
        """A document that does not parse is refused with its line and column."""
        path = _file(tmp_path, '{\n"a": [1,\n', "t.json")
        with pytest.raises(TranscriptError) as caught:
            load_document(path)
        assert str(caught.value) == (
            f"{path}:3: not a JSON document (Expecting value, column 1). A truncated JSON "
            "document cannot be imported; restore the complete file"
        )

    @pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
    def test_a_document_nested_too_deep_is_refused(self, tmp_path: Path, depth: int) -> None:
        """Past the depth limit, or Python's own, the document is refused with no line."""
        path = _file(tmp_path, _nested(depth), "t.json")
        with pytest.raises(TranscriptError) as caught:
            load_document(path)
        assert str(caught.value) == f"{path}: {DEEP}. Flatten the document"

    def test_a_document_at_the_size_limit_is_read(self, tmp_path: Path) -> None:
        """A file of exactly `MAX_DOCUMENT_BYTES` is read; one byte more is refused."""
        path = tmp_path / "big.json"
        with open(path, "wb") as fh:
            fh.truncate(MAX_DOCUMENT_BYTES)
        assert len(read_document_bytes(path)) == MAX_DOCUMENT_BYTES
        with open(path, "ab") as fh:
            fh.write(b" ")
        with pytest.raises(TranscriptError) as caught:
            read_document_bytes(path)
        assert str(caught.value) == (
            f"{path}: {MAX_DOCUMENT_BYTES + 1} bytes is above the limit of {MAX_DOCUMENT_BYTES}"
            " for a file read whole. Convert it to JSONL (one record a line), which is streamed"
        )


class TestDepth:
    @pytest.mark.parametrize(
        ("value", "limit", "deep"),
        [
            ([[1]], 2, False),
            ([[[1]]], 2, True),
            ({"a": {"b": 1}}, 2, False),
            ({"a": {"b": {}}}, 2, True),
            ([1, [2, [3]]], 2, True),
            ([[[1]], 2], 2, True),
            ("text", 0, False),
            ([], 1, False),
            ([], 0, True),
        ],
    )
    def test_depth_counts_arrays_and_objects(self, value: object, limit: int, deep: bool) -> None:
        """Each array or object is one level; scalars none."""
        assert too_deep(value, limit) is deep

    def test_the_default_limit_is_max_depth(self) -> None:
        """Without a limit, `MAX_DEPTH` levels pass and one more does not."""
        value: list[Any] = []
        for _ in range(MAX_DEPTH - 1):
            value = [value]
        assert not too_deep(value)
        assert too_deep([value])

    def test_repair_reaches_keys_and_nested_values(self) -> None:
        """Strings in lists and dicts, keys included, are repaired; other values kept."""
        value = {"\ud800": [1, "a\udfffb", {"k": "\udc00"}], "n": None}
        assert repair_surrogates(value) == {
            "\ufffd": [1, "a\ufffdb", {"k": "\ufffd"}],
            "n": None,
        }


def _detect(tmp_path: Path, data: bytes | str, name: str = "t.jsonl") -> str:
    return detect_format(_file(tmp_path, data, name))


def _lines_of(*records: object) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


class TestDetect:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ('{"history": []}', "swe-agent"),
            ('{\n  "trajectory": [],\n  "info": {}\n}', "swe-agent"),
            ('{\n  "sessionId": "s",\n  "messages": []\n}', "gemini"),
            ('{"messages": [{"type": "gemini", "content": "hi"}]}', "gemini"),
            ('{"messages": [{"type": "user", "content": "hi"}]}', "gemini"),
            ('{"messages": [{"type": "info"}]}', "gemini"),
            ('{"messages": [{"type": "error"}]}', "gemini"),
            ('{"messages": [{"type": "warning"}]}', "gemini"),
            ('{"messages": [{"type": "user", "role": "user"}]}', "openai"),
            ('{"messages": [{"type": "other"}]}', "openai"),
            ('{"messages": ["x"]}', "openai"),
            ('{"messages": []}', "openai"),
            ('{"messages": {}}', "openai"),
            ('  \n[{"role": "user", "content": "hi"}]', "openai"),
        ],
    )
    def test_whole_documents(self, tmp_path: Path, text: str, expected: str) -> None:
        """One JSON document is told by its keys (and Gemini by its session or message types)."""
        assert _detect(tmp_path, text, "t.json") == expected

    @pytest.mark.parametrize(
        ("doc", "expected"),
        [
            ({"messages": [{"type": "gemini", "content": "hi"}]}, "gemini"),
            ({"messages": [{"role": "user", "content": "x", "sessionId": "s"}]}, "openai"),
            ({"messages": [{"role": "user", "content": "x"}], "meta": {"history": 1}}, "openai"),
        ],
    )
    def test_a_document_is_told_by_its_top_level_keys(
        self, tmp_path: Path, doc: dict[str, object], expected: str
    ) -> None:
        """Nested keys (a message's `sessionId`, a `history`) tell nothing, on one line or many."""
        assert _detect(tmp_path, json.dumps(doc), "one.json") == expected
        assert _detect(tmp_path, json.dumps(doc, indent=2), "many.json") == expected

    def test_a_traj_file_is_swe_agent_whatever_it_holds(self, tmp_path: Path) -> None:
        """The `.traj` suffix alone decides."""
        assert _detect(tmp_path, '{"messages": []}', "run.traj") == "swe-agent"

    @pytest.mark.parametrize(
        ("head", "expected"),
        [
            ('{\n  "history": [\n', "swe-agent"),
            ('{\n  "trajectory": [\n', "swe-agent"),
            ('{\n  "messages": [\n', "openai"),
            ('{\n  "sessionId": "s",\n  "messages": [\n', "gemini"),
        ],
    )
    def test_a_document_that_does_not_parse_is_told_by_its_head(
        self, tmp_path: Path, head: str, expected: str
    ) -> None:
        """A truncated document is told by the keys its head names."""
        assert _detect(tmp_path, head, "t.json") == expected

    @pytest.mark.parametrize(
        "tail",
        [b'"x": "\xff"}', _nested(100_000).encode()],
    )
    def test_a_document_that_cannot_be_decoded_is_told_by_its_head(
        self, tmp_path: Path, tail: bytes
    ) -> None:
        """Bytes that are not UTF-8, or nesting past Python's limit: the head's keys decide."""
        data = b'{\n"messages": [],\n' + tail
        assert _detect(tmp_path, data, "t.json") == "openai"

    def test_a_document_too_large_to_read_is_told_by_its_head(self, tmp_path: Path) -> None:
        """A document above the size limit is not read; its head still tells it."""
        path = _file(tmp_path, '{\n"history": [\n', "t.json")
        with open(path, "ab") as fh:
            fh.truncate(MAX_DOCUMENT_BYTES + 1)
        assert detect_format(path) == "swe-agent"

    @pytest.mark.parametrize(
        ("record", "expected"),
        [
            ({"type": "session_meta", "payload": {}}, "codex"),
            ({"type": "response_item", "payload": {}}, "codex"),
            ({"type": "turn_context", "payload": {}}, "codex"),
            ({"type": "event_msg", "payload": {}}, "codex"),
            ({"type": "compacted", "payload": {}}, "codex"),
            ({"record_type": "state"}, "codex"),
            ({"type": "message", "role": "user"}, "codex"),
            ({"type": "function_call"}, "codex"),
            ({"type": "reasoning"}, "codex"),
            ({"sessionId": "s"}, "claude-code"),
            ({"parentUuid": None}, "claude-code"),
            ({"leafUuid": "u"}, "claude-code"),
            ({"isSidechain": False}, "claude-code"),
            ({"type": "file-history-snapshot"}, "claude-code"),
            ({"type": "queue-operation"}, "claude-code"),
            ({"type": "summary"}, "claude-code"),
            ({"type": "progress"}, "claude-code"),
            ({"type": "user", "message": {"content": "hi"}}, "claude-code"),
            ({"type": "assistant", "message": {"content": "hi"}}, "claude-code"),
            ({"role": "user", "content": "hi"}, "openai"),
            ({"role": "assistant", "tool_calls": []}, "openai"),
        ],
    )
    def test_a_jsonl_record_tells_its_format(
        self, tmp_path: Path, record: dict[str, object], expected: str
    ) -> None:
        """The first record whose fields or type belong to one format decides."""
        assert _detect(tmp_path, _lines_of(record)) == expected

    @pytest.mark.parametrize(
        "record",
        [
            {"type": "session_meta"},
            {"type": "message", "payload": {}},
            {"type": "user", "message": "hi"},
            {"type": "user"},
            {"role": "user"},
            "a string",
            7,
            {"hello": 1},
        ],
    )
    def test_records_that_tell_nothing_are_refused(self, tmp_path: Path, record: object) -> None:
        """No telling field or type: the format cannot be told, and the formats are named."""
        path = _file(tmp_path, _lines_of(record))
        with pytest.raises(TranscriptError) as caught:
            detect_format(path)
        assert str(caught.value) == (
            f"{path}: cannot tell the transcript format from its first records. Name it: one"
            " of claude-code, codex, gemini, openai, swe-agent"
        )

    def test_the_first_telling_record_decides(self, tmp_path: Path) -> None:
        """Records that tell nothing are passed over; the first that tells wins."""
        text = _lines_of({"hello": 1}, {"type": "other"}, {"role": "user", "content": "x"})
        assert _detect(tmp_path, text + _lines_of({"sessionId": "s"})) == "openai"

    @pytest.mark.parametrize(
        ("records", "expected"),
        [
            (
                [{"sessionId": "s", "type": "user"}, {"type": "x", "messages": [], "history": 1}],
                "claude-code",
            ),
            ([{"type": "session_meta", "payload": {}}, {"role": "user", "content": "x"}], "codex"),
        ],
    )
    def test_a_jsonl_file_is_told_by_its_first_record(
        self, tmp_path: Path, records: list[object], expected: str
    ) -> None:
        """A first line that is a record decides, whatever keys later records hold."""
        assert _detect(tmp_path, _lines_of(*records)) == expected

    def test_lines_that_are_not_json_are_passed_over(self, tmp_path: Path) -> None:
        """A line that does not parse is skipped; the next record still tells the format."""
        text = "garbage\n" + _lines_of({"role": "user", "content": "x"})
        assert _detect(tmp_path, text) == "openai"

    def test_a_first_line_holding_a_record_and_junk_is_read(self, tmp_path: Path) -> None:
        """A line's first value is read even when junk follows it on the line."""
        assert _detect(tmp_path, ' {"role": "user", "content": "x"} junk\n') == "openai"

    def test_a_one_line_jsonl_record_is_not_a_document(self, tmp_path: Path) -> None:
        """A first line that parses but has no document key is read as a record."""
        assert _detect(tmp_path, _lines_of({"sessionId": "s", "type": "user"})) == "claude-code"

    @pytest.mark.parametrize(("skipped", "expected"), [(19, True), (20, False)])
    def test_only_the_first_twenty_lines_are_probed(
        self, tmp_path: Path, skipped: int, expected: bool
    ) -> None:
        """A telling record on line 20 decides; on line 21 it is not looked at."""
        text = _lines_of(*[{"hello": i} for i in range(skipped)], {"role": "user", "content": "x"})
        path = _file(tmp_path, text)
        if expected:
            assert detect_format(path) == "openai"
        else:
            with pytest.raises(TranscriptError, match="cannot tell the transcript format"):
                detect_format(path)

    @pytest.mark.parametrize(("pad", "expected"), [(0, True), (1, False)])
    def test_only_the_first_64_kib_are_read(self, tmp_path: Path, pad: int, expected: bool) -> None:
        """A record ending at byte 65,536 is read; one byte later it is cut off and not."""
        tail = '{"role": "user", "content": "x"}'
        first = '{"pad": "' + "x" * (65536 - len(tail) - 12 + pad) + '"}\n'
        path = _file(tmp_path, first + tail + "\n")
        assert len(first + tail) == 65536 + pad
        if expected:
            assert detect_format(path) == "openai"
        else:
            with pytest.raises(TranscriptError, match="cannot tell the transcript format"):
                detect_format(path)

    @pytest.mark.parametrize(
        ("head", "expected"),
        [
            ('{"type": "response_item", "payload": {"text": "', "codex"),
            ('{"type":"session_meta","payload":{"x": "', "codex"),
            ('{"type": "response_item", "x": "', None),
            ('{"payload": {}, "x": "', None),
            ('{"sessionId": "s", "text": "', "claude-code"),
            ('{"parentUuid": null, "text": "', "claude-code"),
            ('{"leafUuid": "u", "text": "', "claude-code"),
            ('{"isSidechain": false, "text": "', "claude-code"),
        ],
    )
    def test_a_first_record_longer_than_the_head_is_sniffed(
        self, tmp_path: Path, head: str, expected: str | None
    ) -> None:
        """A record cut off by the 64 KiB head is told by the keys it names."""
        path = _file(tmp_path, head + "y" * 70000 + '"}\n')
        if expected is not None:
            assert detect_format(path) == expected
        else:
            with pytest.raises(TranscriptError, match="cannot tell the transcript format"):
                detect_format(path)
