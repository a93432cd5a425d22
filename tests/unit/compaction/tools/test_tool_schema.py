"""The todo_write tool as OpenAI and Anthropic tool definitions, from the one pydantic model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from compaction.tools import parameters_schema
from prompts import anthropic_tool, openai_tool


def objects(schema: Any) -> Iterator[dict[str, Any]]:
    """Yield every object-typed subschema, at any depth."""
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            yield schema
        for value in schema.values():
            yield from objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from objects(value)


class TestParametersSchema:
    def test_shape(self) -> None:
        """One required parameter, todos: an array of {content, status}."""
        schema = parameters_schema()
        assert schema["required"] == ["todos"]
        assert list(schema["properties"]) == ["todos"]
        todos = schema["properties"]["todos"]
        assert todos["type"] == "array"
        item = todos["items"]
        assert item["required"] == ["content", "status"]
        assert item["properties"]["content"]["type"] == "string"
        assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]

    def test_every_level_says_what_it_is(self) -> None:
        """The model reads a description of the list, of an item and of each field."""
        todos = parameters_schema()["properties"]["todos"]
        described = [todos, todos["items"], *todos["items"]["properties"].values()]
        assert [d["description"] for d in described] == [
            "The complete updated todo list.",
            "One task: what to do and where it stands.",
            "What to do, as an imperative sentence.",
            "pending, in_progress or completed.",
        ]

    def test_closed_at_every_object_level(self) -> None:
        """Every object has additionalProperties false and requires all its properties."""
        found = list(objects(parameters_schema()))
        assert len(found) == 2
        for obj in found:
            assert obj["additionalProperties"] is False
            assert sorted(obj["required"]) == sorted(obj["properties"])

    def test_fits_strict_subset(self) -> None:
        """No $ref, $defs, titles or length keywords: strict function calling accepts it."""
        text = json.dumps(parameters_schema())
        for word in ('"$ref"', '"$defs"', '"title"', '"minLength"', '"default"'):
            assert word not in text

    @pytest.mark.parametrize(
        ("args", "valid"),
        [
            ({"todos": [{"content": "a", "status": "pending"}]}, True),
            ({"todos": []}, True),
            ({"todos": [{"content": "a", "status": "pending", "id": "1"}]}, False),
            ({"todos": [{"content": "a", "status": "done"}]}, False),
            ({"todos": [{"content": "a"}]}, False),
            ({"todos": [], "merge": True}, False),
            ({}, False),
        ],
    )
    def test_schema_agrees_with_validation(self, args: dict[str, Any], valid: bool) -> None:
        """A JSON Schema validator accepts exactly the shapes the model may send."""
        validator = jsonschema.Draft202012Validator(parameters_schema())
        assert validator.is_valid(args) is valid


class TestExports:
    def test_openai_function_tool(self) -> None:
        """OpenAI: a strict function tool named todo_write with the closed schema."""
        tool = openai_tool("Keep a todo list.")
        assert tool == {
            "type": "function",
            "function": {
                "name": "todo_write",
                "description": "Keep a todo list.",
                "strict": True,
                "parameters": parameters_schema(),
            },
        }

    def test_anthropic_tool(self) -> None:
        """Anthropic: name, description and input_schema."""
        tool = anthropic_tool("Keep a todo list.")
        assert tool == {
            "name": "todo_write",
            "description": "Keep a todo list.",
            "input_schema": parameters_schema(),
        }
        assert tool["input_schema"]["type"] == "object"

    def test_deterministic(self) -> None:
        """Same call, same bytes: the tool list never disturbs a cached prompt prefix."""
        assert json.dumps(openai_tool("d")) == json.dumps(openai_tool("d"))
        assert parameters_schema() is not parameters_schema()


class TestSchemaCopies:
    def test_the_enum_and_fields_are_the_contract(self) -> None:
        """The statuses offered are the contract's, and an item has exactly two fields."""
        from compaction.contract import TODO_STATUSES

        item = parameters_schema()["properties"]["todos"]["items"]
        assert item["properties"]["status"]["enum"] == list(TODO_STATUSES)
        assert item["required"] == ["content", "status"] == list(item["properties"])

    def test_a_changed_copy_leaves_the_next_one_whole(self) -> None:
        """Each call returns its own copy, nested parts included: a caller may change it."""
        first = parameters_schema()
        expected = json.dumps(first, sort_keys=True)
        first["properties"]["todos"]["items"]["properties"].clear()
        first["required"].append("extra")
        assert json.dumps(parameters_schema(), sort_keys=True) == expected
