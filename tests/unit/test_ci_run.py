"""A fresh machine's install: CI from nothing each run (.ci/run), the SDKs' untested majors bounded.

The script is run in a copy of its folder with stand-ins for `python3` and the venv's tools, which
record how they were called; a venv left behind by an earlier run (with a stale package in it)
must be gone before the install, and pip must run with its cache off. Each SDK requirement in
the extras has an upper bound below its next, untested major release.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]

TOOL = """#!/bin/sh
echo "$(basename "$0") PIP_NO_CACHE_DIR=${PIP_NO_CACHE_DIR:-} $*" >> "$CALLS"
case "$*" in list*) echo "anthropic==2.17.0";; esac
"""
PYTHON = """#!/bin/sh
echo "python3 stale=$(ls .venv/lib 2>/dev/null) $*" >> "$CALLS"
if [ "$1 $2" = "-m venv" ]; then
    mkdir -p "$3/bin"
    for tool in pip ruff mypy pytest; do
        cp "$TOOL_STUB" "$3/bin/$tool" && chmod +x "$3/bin/$tool"
    done
fi
"""


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def ci_copy(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A checkout holding .ci/run and a .venv an earlier run left, and stand-in tools on PATH."""
    root = tmp_path / "checkout"
    (root / ".ci").mkdir(parents=True)
    shutil.copy(CHECKOUT / ".ci" / "run", root / ".ci" / "run")
    (root / ".venv" / "lib" / "stale-anthropic-0.40").mkdir(parents=True)
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    _script(stubs / "tool", TOOL)
    _script(stubs / "python3", PYTHON)
    _script(stubs / "initdb", "#!/bin/sh\n")
    env = {
        **os.environ,
        "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}",
        "CALLS": str(tmp_path / "calls"),
        "TOOL_STUB": str(stubs / "tool"),
    }
    env.pop("PIP_NO_CACHE_DIR", None)
    return root, env


def test_every_install_starts_from_nothing(ci_copy: tuple[Path, dict[str, str]]) -> None:
    """The earlier run's venv is removed before the first `venv`, and pip runs without a cache."""
    root, env = ci_copy
    subprocess.run(["bash", str(root / ".ci" / "run")], cwd=root, env=env, check=True, timeout=60)
    calls = Path(env["CALLS"]).read_text().splitlines()
    venvs = [line for line in calls if line.startswith("python3 ") and "-m venv" in line]
    assert venvs, calls
    assert venvs[0].startswith("python3 stale= -m venv .venv"), calls
    installs = [line for line in calls if line.startswith("pip ") and " install " in line]
    assert installs, calls
    assert all("PIP_NO_CACHE_DIR=1 " in line for line in installs), installs
    assert any(line.startswith("pytest ") for line in calls), calls


SDKS = ("anthropic", "openai", "openai-agents", "langchain", "httpx", "psycopg")
"""The SDKs whose next major release could break an adapter or a test: each is bounded above."""


def test_every_sdk_requirement_bounds_the_untested_major() -> None:
    """Each SDK in the extras has an upper bound (`<N`): a major CI never ran is not installed."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]
    found: dict[str, str] = {}
    for requirements in project["optional-dependencies"].values():
        for line in requirements:
            req = Requirement(line)
            if req.name in SDKS:
                found[req.name] = str(req.specifier)
    assert sorted(found) == sorted(SDKS)
    for name, spec in found.items():
        assert any(part.startswith("<") for part in spec.split(",")), (name, spec)
