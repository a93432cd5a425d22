"""The event JSON Schema: the committed file is the generated one, and documented lines fit it."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compaction import dump_event, parse_event
from compaction.events import EVENT_TYPES, event_json_schema

DOC = Path(__file__).resolve().parents[3] / "docs" / "log-format.md"
REGENERATE = "regenerate it: harness log --schema > compaction/schemas/event.schema.json"


def committed_schema_text() -> str:
    """The schema file shipped as package data."""
    path = resources.files("compaction").joinpath("schemas", "event.schema.json")
    return path.read_text(encoding="utf-8")


def doc_example_lines() -> list[str]:
    """Every line of the ```jsonl blocks of docs/log-format.md."""
    blocks = re.findall(r"```jsonl\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    return [line for block in blocks for line in block.splitlines() if line]


def validator() -> jsonschema.Draft202012Validator:
    """A validator over the committed schema."""
    schema: dict[str, Any] = json.loads(committed_schema_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


class TestCommittedSchema:
    def test_equals_generated(self) -> None:
        """The committed file is byte for byte what `harness log --schema` prints."""
        generated = json.dumps(event_json_schema(), indent=2, sort_keys=True, ensure_ascii=False)
        assert committed_schema_text() == generated + "\n", REGENERATE

    def test_covers_every_event_type(self) -> None:
        """Each event type of the toolkit is a branch of the schema."""
        schema = json.loads(committed_schema_text())
        assert sorted(schema["discriminator"]["mapping"]) == sorted(EVENT_TYPES)
        for ref in schema["oneOf"]:
            name = ref["$ref"].rsplit("/", 1)[1]
            assert schema["$defs"][name]["required"] == ["v", "seq", "type", "data"]


class TestDocumentedLines:
    def test_doc_has_an_example_of_each_type(self) -> None:
        """docs/log-format.md shows at least one line of every event type."""
        types = {json.loads(line)["type"] for line in doc_example_lines()}
        assert types == set(EVENT_TYPES)

    @pytest.mark.parametrize("line", doc_example_lines())
    def test_example_validates_and_is_canonical(self, line: str) -> None:
        """Each documented line fits the schema, parses, and is in canonical form."""
        validator().validate(json.loads(line))
        assert dump_event(parse_event(line)) == line

    @pytest.mark.parametrize(
        "obj",
        [
            pytest.param({"v": 1, "seq": 1, "type": "turn/start"}, id="no-data"),
            pytest.param({"v": 1, "seq": 0, "type": "turn/end", "data": {}}, id="seq-zero"),
            pytest.param({"v": 2, "seq": 1, "type": "turn/end", "data": {}}, id="newer-version"),
            pytest.param({"v": 1, "seq": 1, "type": "x/y", "data": {}}, id="unknown-type"),
            pytest.param(
                {"v": 1, "seq": 1, "type": "todo/write", "data": {"todos": [{"content": "a"}]}},
                id="item-without-status",
            ),
            pytest.param(
                {"v": 1, "seq": 1, "type": "turn/end", "data": {}, "extra": 1}, id="extra-field"
            ),
        ],
    )
    def test_schema_rejects(self, obj: dict[str, Any]) -> None:
        """Lines the reader rejects fail the schema too."""
        assert not validator().is_valid(obj)
