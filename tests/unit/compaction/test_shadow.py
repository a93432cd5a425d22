"""A user's own `prompts` module never hides the toolkit's silently: one line names it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def run(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run Python in `folder` (first on sys.path, as a user's script folder is)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HARNESS_DEBUG", "PYTHONPATH")}
    return subprocess.run(
        [sys.executable, *argv], cwd=folder, capture_output=True, text=True, timeout=120, env=env
    )


@pytest.fixture(params=["file", "package"])
def shadowed(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    """A folder holding a user's `prompts.py`, or a `prompts/` package; and that file."""
    if request.param == "file":
        found = tmp_path / "prompts.py"
    else:
        (tmp_path / "prompts").mkdir()
        found = tmp_path / "prompts" / "__init__.py"
    found.write_text("SYSTEM = 'You are terse.'\n", encoding="utf-8")
    return tmp_path, found


@pytest.mark.parametrize(
    "module", ["compaction", "compaction.stores", "harness.integrations.langchain_agents"]
)
def test_importing_the_toolkit_names_the_file(shadowed: tuple[Path, Path], module: str) -> None:
    """`import compaction` (or a room, or an integration) fails naming the file and the fix."""
    folder, found = shadowed
    done = run(folder, "-c", f"import {module}")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"compaction.errors.ShadowedModuleError: {found} shadows Context Harness's 'prompts' "
        "package (a module named 'prompts' earlier on sys.path); rename it, e.g. to "
        "my_prompts.py, or move it off sys.path"
    )


def test_the_error_is_an_import_error_and_a_config_error(shadowed: tuple[Path, Path]) -> None:
    """Hosts catch it as an ImportError or as the toolkit's ConfigError; its text is one line."""
    folder, found = shadowed
    code = (
        "import sys\n"
        "try:\n    import compaction\n"
        "except ImportError as exc:\n"
        "    errors = sys.modules['compaction.errors']\n"
        "    print(isinstance(exc, errors.ConfigError), exc.found, len(str(exc).splitlines()))\n"
    )
    done = run(folder, "-c", code)
    assert done.stdout.split() == ["True", str(found), "1"]


def test_the_cli_says_it_in_one_line(shadowed: tuple[Path, Path]) -> None:
    """`python -m harness todos LOG` beside a prompts.py: one stderr line, exit 2."""
    folder, found = shadowed
    done = run(folder, "-m", "harness", "todos", "s.jsonl")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"harness: {found} shadows Context Harness's 'prompts' package (a module named "
        "'prompts' earlier on sys.path); rename it, e.g. to my_prompts.py, or move it off sys.path"
    ]


def test_another_name_does_not_shadow(tmp_path: Path) -> None:
    """A `my_prompts.py` and a `templates/` folder are left alone: the toolkit imports."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "my_prompts.py").write_text("X = 1\n", encoding="utf-8")
    done = run(tmp_path, "-c", "import compaction, prompts; print(prompts.Mode.__name__)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Mode"


def test_a_folder_without_init_is_ours_or_named(tmp_path: Path) -> None:
    """A `prompts/` folder of templates: the toolkit's package wins, or the folder is named.

    Where the toolkit is on sys.path (an installed wheel) a folder without __init__.py never
    wins; where an import hook finds it (an editable install) the folder wins and is named.
    """
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "system.txt").write_text("x", encoding="utf-8")
    done = run(tmp_path, "-c", "import compaction, prompts; print(prompts.Mode.__name__)")
    if done.returncode == 0:
        assert done.stdout.strip() == "Mode"
    else:
        assert f"{tmp_path / 'prompts'} shadows Context Harness's 'prompts'" in done.stderr
