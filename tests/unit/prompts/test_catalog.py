"""The tool catalog: user tools in any accepted shape, sorted, with todo_write last."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field

from compaction import ConfigError
from prompts import (
    ToolCatalog,
    anthropic_tool,
    load_tools,
    openai_tool,
    todo_write_description,
    todo_write_spec,
    tool_spec,
)

EXAMPLE_TOOLS = Path(__file__).resolve().parents[3] / "prompts" / "examples" / "coding_tools.json"


class RunTests(BaseModel):
    """Run the test suite."""

    selector: str = Field(default="", description="Which tests.")


class Grep(BaseModel):
    """Search file contents."""

    model_config = ConfigDict(title="search_code")

    pattern: str


class TestToolSpec:
    def test_openai_nested_bare_and_anthropic_shapes(self) -> None:
        """The three dict shapes give the same spec."""
        params = {"type": "object", "properties": {"q": {"type": "string"}}}
        nested = {
            "type": "function",
            "function": {"name": "s", "description": "d", "parameters": params},
        }
        bare = {"name": "s", "description": "d", "parameters": params}
        anthropic = {"name": "s", "description": "d", "input_schema": params}
        assert tool_spec(nested) == tool_spec(bare) == tool_spec(anthropic)
        assert tool_spec(nested).openai() == nested

    def test_pydantic_models(self) -> None:
        """A pydantic model gives name (title or snake_case), docstring and schema."""
        run = tool_spec(RunTests)
        assert (run.name, run.description) == ("run_tests", "Run the test suite.")
        assert run.parameters["properties"]["selector"]["description"] == "Which tests."
        assert tool_spec(Grep).name == "search_code"

    @pytest.mark.parametrize(
        ("definition", "match"),
        [
            ({"type": "custom", "custom": {"name": "x"}}, "not a function tool"),
            ({"function": {"description": "no name"}}, "tool name None must match"),
            ({"name": "has space"}, "tool name 'has space' must match"),
            ("read_file", "must be a mapping or a pydantic model"),
        ],
    )
    def test_bad_definitions(self, definition: object, match: str) -> None:
        """Definitions without a usable name or of another kind are rejected."""
        with pytest.raises(ConfigError, match=match):
            # A value of the wrong type on purpose: the runtime check is under test.
            tool_spec(definition)  # type: ignore[arg-type]


class TestCatalog:
    def test_sorted_by_name_then_todo_write(self) -> None:
        """User tools come sorted by name whatever the input order; todo_write closes the list."""
        a = ToolCatalog([{"name": "zeta"}, {"name": "alpha"}, RunTests])
        b = ToolCatalog([RunTests, {"name": "alpha"}, {"name": "zeta"}])
        names = [t.name for t in a.tools(allow_parallel_in_progress=False)]
        assert names == ["alpha", "run_tests", "zeta", "todo_write"]
        assert a.tools(allow_parallel_in_progress=False) == b.tools(
            allow_parallel_in_progress=False
        )

    @pytest.mark.parametrize(
        ("tools", "match"),
        [
            ([{"name": "a"}, {"name": "a"}], 'two user tools are called "a"'),
            ([{"name": "todo_write"}], "may not be called todo_write"),
        ],
    )
    def test_rejects_clashing_names(self, tools: list[dict[str, str]], match: str) -> None:
        """Duplicate names, or a user tool posing as todo_write, are configuration errors."""
        with pytest.raises(ConfigError, match=match):
            ToolCatalog(tools)

    def test_example_catalog(self) -> None:
        """The shipped example holds about ten realistic coding tools."""
        tools = load_tools(EXAMPLE_TOOLS)
        assert 10 <= len(tools) <= 12
        assert {"read_file", "edit_file", "grep", "run_command"} <= {t.name for t in tools}

    @pytest.mark.parametrize(
        ("text", "match"),
        [
            ("{", "not valid JSON"),
            ('{"name": "x"}', "expected a JSON array"),
            ('[{"a": 1}]', r"tools\[0\]"),
        ],
    )
    def test_bad_tools_file(self, tmp_path: Path, text: str, match: str) -> None:
        """A bad tools file names the file and the item."""
        path = tmp_path / "tools.json"
        path.write_text(text)
        with pytest.raises(ConfigError, match=match):
            load_tools(path)


class TestTodoWriteDescription:
    def test_agent_and_parallel_differ_exactly_in_the_in_progress_rule(self) -> None:
        """The two variants differ in one line: exactly one in progress vs several."""
        one = todo_write_description(allow_parallel_in_progress=False).splitlines()
        several = todo_write_description(allow_parallel_in_progress=True).splitlines()
        changes = [
            op for op in difflib.SequenceMatcher(a=one, b=several).get_opcodes() if op[0] != "equal"
        ]
        assert len(changes) == 1
        tag, i1, i2, j1, j2 = changes[0]
        assert (tag, i2 - i1, j2 - j1) == ("replace", 1, 1)
        assert "exactly one item `in_progress`" in one[i1]
        assert "Several items may be `in_progress` at once" in several[j1]
        assert i1 == len(one) - 1, "the mode-dependent rule is the last line"

    @pytest.mark.parametrize("parallel", [False, True])
    def test_description_states_the_brief_rules(self, parallel: bool) -> None:
        """Skip trivial requests, list before multi-step work, complete at once, never batch."""
        text = todo_write_description(allow_parallel_in_progress=parallel)
        assert "Skip the list for a simple, single-step request" in text
        assert "write the list before you start" in text
        assert "Mark an item `completed` as soon as it is done" in text
        assert "never save completions up to mark them in a batch" in text
        assert "replaces the whole list" in text

    def test_spec_comes_from_compaction(self) -> None:
        """todo_write's OpenAI and Anthropic forms equal compaction's openai_tool/anthropic_tool."""
        description = todo_write_description(allow_parallel_in_progress=False)
        spec = todo_write_spec(allow_parallel_in_progress=False)
        assert spec.openai() == openai_tool(description)
        assert spec.anthropic() == anthropic_tool(description)
