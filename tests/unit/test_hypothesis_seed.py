"""The CI profile is not derandomized: each run draws a seed, prints it, and replays with it."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # five pytest runs in subprocesses

PROBE = """
from pathlib import Path

from hypothesis import given, strategies as st


@given(st.integers())
def test_probe(n):
    with open(Path(__file__).parent / "drawn.txt", "a") as fh:
        fh.write(f"{n}\\n")
"""


def run_probe(
    folder: Path, *args: str, profile: str | None = "ci", ci: bool = False
) -> tuple[str, list[str]]:
    """Run the probe test under our conftest; return the output and the integers drawn.

    With ``ci`` the ``CI`` variable is set as on a CI machine, where Hypothesis itself detects CI
    and would otherwise fall back on its own derandomized built-in ``ci`` profile.
    """
    drawn = folder / "drawn.txt"
    drawn.unlink(missing_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("HYPOTHESIS_SEED", "HYPOTHESIS_PROFILE", "CI")
    }
    if profile is not None:
        env["HYPOTHESIS_PROFILE"] = profile
    if ci:
        env["CI"] = "true"
    # Only the plugins the seed goes through (Hypothesis's and xdist's): the others installed
    # (LangSmith's, pytest-benchmark, anyio's, ...) have no part in it and cost each of these
    # pytest processes 0.6 CPU s (1.25 -> 0.6 for one run of the probe).
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*command, "-p", "_hypothesis_pytestplugin", "-p", "xdist.plugin", str(folder), *args],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, drawn.read_text().splitlines()


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    for name in ("conftest.py", "cost_order.py", "cpu_costs.json"):  # conftest imports cost_order
        shutil.copy(TESTS / name, tmp_path / name)
    (tmp_path / "test_probe.py").write_text(PROBE, encoding="utf-8")
    return tmp_path


class TestSeed:
    def test_ci_runs_print_a_fresh_seed_and_replay_with_it(self, probe: Path) -> None:
        """Two runs as CI makes them (``CI`` set, no profile named) draw different seeds.

        Hypothesis detects CI itself and would fall back on its own derandomized ``ci``
        profile; ours must not. The printed seed reproduces a run's examples, also those of a
        run spread over xdist workers.
        """
        # The first run is spread over pytest-xdist workers, as the test command runs: the
        # seed it prints must be the one its workers drew with.
        first, drawn = run_probe(probe, "-n", "2", profile=None, ci=True)
        second, again = run_probe(probe, profile=None, ci=True)
        assert "derandomized" not in first + second
        seeds = [re.findall(r"hypothesis seed (\d+)", out) for out in (first, second)]
        assert [len(s) for s in seeds] == [1, 1], first + second  # once, in the summary
        assert seeds[0] != seeds[1]
        assert drawn != again
        _, replayed = run_probe(probe, f"--hypothesis-seed={seeds[0][0]}", profile=None, ci=True)
        assert replayed == drawn

    def test_mutate_profile_is_derandomized(self, probe: Path) -> None:
        """The mutation profile draws the same examples every run, with no seed to give."""
        out, drawn = run_probe(probe, profile="mutate")
        assert "derandomized profile 'mutate'" in out
        assert run_probe(probe, profile="mutate")[1] == drawn


def first_line(tree: ast.Module, matches: Callable[[ast.stmt], bool]) -> int:
    """Return the line of the first top-level statement of `tree` that `matches`."""
    return next(node.lineno for node in tree.body if matches(node))


class TestBytecodeBeforeHypothesis:
    def test_conftest_allows_bytecode_before_it_imports_hypothesis(self) -> None:
        """Bytecode is allowed before Hypothesis loads, so pytest caches its rewritten asserts.

        Imported first, Hypothesis's modules were rewritten anew by every pytest process.
        """
        tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))

        def sets_bytecode(node: ast.stmt) -> bool:
            return isinstance(node, ast.If) and "dont_write_bytecode" in ast.unparse(node.test)

        def imports_hypothesis(node: ast.stmt) -> bool:
            if isinstance(node, ast.ImportFrom):
                return (node.module or "").split(".")[0] == "hypothesis"
            return isinstance(node, ast.Import) and any(
                a.name.split(".")[0] == "hypothesis" for a in node.names
            )

        assert first_line(tree, sets_bytecode) < first_line(tree, imports_hypothesis)
