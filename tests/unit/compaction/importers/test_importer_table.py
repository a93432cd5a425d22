"""Adding an importer is one table entry: every list of formats comes from `IMPORTERS`."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction import ConfigError, TranscriptError
from compaction.importers import FORMAT_CHOICES, LABELS, load
from compaction.importers._detect import detect_format
from compaction.importers._formats import FORMATS, IMPORTERS, importer
from harness.cli import build_parser


class TestImporterTable:
    def test_every_list_comes_from_the_table(self) -> None:
        """FORMATS, FORMAT_CHOICES and LABELS are the table's names and labels, in order."""
        names = tuple(i.name for i in IMPORTERS)
        assert names == FORMATS == FORMAT_CHOICES[1:]
        assert FORMAT_CHOICES[0] == "auto"
        assert len(set(names)) == len(names)
        assert ", ".join(i.label for i in IMPORTERS) == LABELS

    def test_the_cli_takes_every_format_of_the_table(self) -> None:
        """`harness import NAME` accepts each name of the table, and auto."""
        for name in FORMAT_CHOICES:
            args = build_parser().parse_args(["import", name, "t.jsonl", "-o", "s.jsonl"])
            assert args.format == name

    def test_lookup_by_name(self) -> None:
        """importer(name) finds the entry; an unknown name is a KeyError."""
        assert importer("codex").label == "Codex"
        with pytest.raises(KeyError):
            importer("auto")

    @pytest.mark.parametrize("bad", ["Codex", "", "claude_code"])
    def test_load_refuses_a_name_not_in_the_table(self, bad: str) -> None:
        """load() with a format outside FORMAT_CHOICES is a ConfigError naming the choices."""
        with pytest.raises(ConfigError, match="format must be one of auto, claude-code"):
            load("whatever.jsonl", bad)

    def test_detection_message_lists_the_table(self, tmp_path: Path) -> None:
        """An unrecognisable transcript's fix names every format of the table."""
        path = tmp_path / "x.jsonl"
        path.write_text('{"nothing": 1}\n')
        with pytest.raises(TranscriptError, match=", ".join(FORMATS)):
            detect_format(path)
