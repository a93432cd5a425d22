"""The OpenHands driver's action types for recorded tool specs (`drivers._open_actions`).

The real transcripts' tools carry open specs (no properties) or arguments their spec does not
declare; OpenHands' ``Action`` forbids extra fields, so an action type built from the declared
properties alone rejected every such recorded call. The builder is tested here on a stand-in
base configured as OpenHands' ``Schema`` is (``extra="forbid"``, ``frozen=True``); the part that
needs the SDK runs under the OpenHands venv's interpreter, and is skipped where it is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from benchmarks.peers.driver_batches import DRIVER_ENV
from benchmarks.peers.drivers._open_actions import (
    action_fields,
    open_action_type,
    recorded_arguments,
)
from benchmarks.peers.run import ENVS
from benchmarks.peers.venvs import default_root, is_ready, venv_python

REPO = Path(__file__).resolve().parents[2]
OPEN_SPEC: dict[str, Any] = {"type": "object", "properties": {}}
READ_SPEC: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "path": {"type": "string", "description": "Path relative to the repository root."},
        "limit": {"type": "integer", "description": "Maximum number of lines to read."},
    },
    "required": ["path"],
}


class StrictBase(BaseModel):
    """Configured as OpenHands' ``Schema``: extra fields forbidden, instances frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class TestOpenSpec:
    def test_recorded_arguments_are_accepted_as_given(self):
        """An open spec takes any recorded arguments, types kept, and gives them back."""
        action_type = open_action_type("TaskUpdateAction", OPEN_SPEC, StrictBase)
        given = {"taskId": "3", "status": "completed", "owner": None, "addBlocks": [1, 2]}
        action = action_type.model_validate(given)
        assert recorded_arguments(action, OPEN_SPEC) == given

    def test_the_strict_base_alone_rejects_them(self):
        """What the driver did before: the base's own config refuses an undeclared argument."""
        with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
            StrictBase.model_validate({"command": "ls"})

    def test_the_base_config_is_kept(self):
        """The subclass stays frozen like its base, and allows extras where the base forbade."""
        action_type = open_action_type("BashAction", OPEN_SPEC, StrictBase)
        assert issubclass(action_type, StrictBase)
        assert action_type.__name__ == "BashAction"
        assert action_type.model_config.get("frozen") is True
        assert action_type.model_config.get("extra") == "allow"
        action = action_type.model_validate({"command": "ls"})
        with pytest.raises(ValidationError):
            action.command = "rm -rf /"  # type: ignore[attr-defined]


class TestDeclaredSpec:
    def test_an_undeclared_argument_and_a_missing_required_one_pass(self):
        """Gemini CLI's read_file sends ``file_path`` where the spec declares ``path``."""
        action_type = open_action_type("ReadFileAction", READ_SPEC, StrictBase)
        action = action_type.model_validate({"file_path": "docs/color.md"})
        assert recorded_arguments(action, READ_SPEC) == {"file_path": "docs/color.md"}

    def test_declared_arguments_come_back_typed(self):
        """A declared property keeps its JSON type; one left out is not given back."""
        action_type = open_action_type("ReadFileAction", READ_SPEC, StrictBase)
        action = action_type.model_validate({"path": "a.py", "limit": "20"})
        assert recorded_arguments(action, READ_SPEC) == {"path": "a.py", "limit": 20}
        with pytest.raises(ValidationError):
            action_type.model_validate({"path": "a.py", "limit": "twenty"})

    def test_the_schema_still_declares_the_spec(self):
        """Properties in spec order, with their types and descriptions, and the required list."""
        schema = open_action_type("ReadFileAction", READ_SPEC, StrictBase).model_json_schema()
        assert list(schema["properties"]) == ["path", "limit"]
        assert schema["required"] == ["path"]
        limit = schema["properties"]["limit"]
        assert {"type": "integer"} in limit["anyOf"]
        assert limit["description"] == "Maximum number of lines to read."

    def test_required_follows_property_order(self):
        """As pydantic lists required fields: the order the spec's properties come in."""
        spec = {
            "type": "object",
            "properties": {"b": {"type": "string"}, "a": {"type": "string"}},
            "required": ["a", "b", "not-a-property"],
        }
        schema = open_action_type("PairAction", spec, StrictBase).model_json_schema()
        assert schema["required"] == ["b", "a"]

    def test_field_types(self):
        """Arrays and objects get list and dict types; an unknown or missing type is a string."""
        spec = {
            "properties": {
                "items": {"type": "array"},
                "meta": {"type": "object"},
                "odd": {"type": "date"},
                "bare": {},
            }
        }
        fields = action_fields(spec)
        assert [str(fields[name][0]) for name in spec["properties"]] == [
            "list[typing.Any] | None",
            "dict[str, typing.Any] | None",
            "str | None",
            "str | None",
        ]


_SDK_CHECK = """
import json
from benchmarks.peers.drivers import openhands_condenser as oh
from benchmarks.peers.drivers._script import Script, Step, Turn
spec = {"name": "Bash", "description": "d", "parameters": {"type": "object", "properties": {}}}
args = {"command": "ls -l", "timeout": 5}
step = Step("", ({"id": "c1", "name": "Bash", "arguments": args},), {"c1": "total 0"})
script = Script("s", "", (spec,), (Turn("go", (step,)),))
tool = oh._tool_class(spec, oh._Outputs(script)).create()[0]
action = tool.action_from_arguments(dict(args))
observation = tool.executor(action)
params = tool.to_openai_tool(add_security_risk_prediction=True)["function"]["parameters"]
print(json.dumps({"text": observation.text, "properties": sorted(params["properties"])}))
"""


@pytest.mark.slow
def test_the_sdk_runs_a_recorded_call_on_an_open_spec():
    """Under OpenHands itself: the recorded call validates and gets its recorded output."""
    env = ENVS["openhands"]
    if not is_ready(env, default_root()):
        pytest.skip(f"the OpenHands peer venv is absent under {default_root()}")
    done = subprocess.run(
        [str(venv_python(default_root() / env.name)), "-c", _SDK_CHECK],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, **DRIVER_ENV, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"text": "total 0", "properties": ["security_risk", "summary"]}
