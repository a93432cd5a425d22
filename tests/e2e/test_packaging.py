"""The wheel and the sdist: what they ship, and `harness demo` / `harness bench` installed.

The wheel is built from a copy of the sources with setuptools' own build backend (offline), then
installed with pip into a bare folder; the installed CLI runs in an interpreter that sees that
folder and the dependencies, not the checkout (the editable finder is removed).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from collections.abc import Iterable
from pathlib import Path

import pytest

from harness.commands.bench_cmd import find_checkout

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (
    "pyproject.toml",
    "README.md",
    "compaction",
    "prompts",
    "harness",
    "benchmarks",
)

pytestmark = pytest.mark.slow

RUN_INSTALLED = textwrap.dedent(
    """
    import contextlib, importlib.util, io, json, sys

    site = sys.argv[1]
    # Forget the checkout: no editable finder, no working folder on the path.
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in str(type(f).__module__)]
    sys.path[:] = [site] + [p for p in sys.path if p not in ("", ".")]
    from harness.cli import main
    import harness

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        demo = main(["demo", "--turns", "3", "--window", "12000"])
        bench = main(["bench", "--quick"])
    print(json.dumps({
        "harness": harness.__file__,
        "benchmarks": importlib.util.find_spec("benchmarks") is not None,
        "demo": demo, "bench": bench, "out": out.getvalue(), "err": err.getvalue(),
    }))
    """
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the wheel from a copy of the sources."""
    return build(tmp_path_factory, "build_wheel", SOURCES)


def build(factory: pytest.TempPathFactory, hook: str, names: Iterable[str]) -> Path:
    """Build with setuptools' `hook` (``build_wheel``, ``build_sdist``) from a copy of `names`."""
    src = factory.mktemp("src")
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "results", ".hypothesis")
    for name in names:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    dist = factory.mktemp("dist")
    code = f"import sys\nfrom setuptools import build_meta\nprint(build_meta.{hook}(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(dist)],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return dist / done.stdout.strip().splitlines()[-1]


class TestWheel:
    def test_ships_no_benchmarks_package(self, wheel: Path) -> None:
        """The wheel holds compaction, prompts and harness (integrations inside), nothing else."""
        names = zipfile.ZipFile(wheel).namelist()
        tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
        assert tops == {"compaction", "prompts", "harness"}
        assert "harness/integrations/langchain_agents.py" in names
        assert not [n for n in names if n.startswith("benchmarks/")]

    def test_ships_what_the_demo_reads(self, wheel: Path) -> None:
        """The simulation's data and templates, and the py.typed markers, are in the wheel."""
        names = set(zipfile.ZipFile(wheel).namelist())
        for needed in (
            "harness/simulation/data/tools.json",
            "harness/simulation/templates/todo_message.md.j2",
            "harness/simulation/templates/todo_system.md.j2",
            "compaction/py.typed",
            "prompts/py.typed",
            "harness/py.typed",
        ):
            assert needed in names, needed

    def test_demo_runs_from_the_installed_wheel(self, wheel: Path, tmp_path: Path) -> None:
        """Installed without the checkout, demo works and bench says to run from a checkout."""
        site = tmp_path / "site"
        pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
        subprocess.run([*pip, "--target", str(site), str(wheel)], check=True, timeout=300)
        done = subprocess.run(
            [sys.executable, "-I", "-c", RUN_INSTALLED, str(site)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        result = json.loads(done.stdout.splitlines()[-1])
        assert result["harness"].startswith(str(site))
        assert result["benchmarks"] is False
        assert result["demo"] == 0
        assert "Task panel" in result["out"]
        assert "Savings:" in result["out"]
        assert result["bench"] == 2
        assert "runs from a checkout" in result["err"]


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the sdist from a copy of the checkout's files, tests/ and MANIFEST.in included."""
    names = (*SOURCES, "tests", "CHANGELOG.md", "MANIFEST.in")
    return build(tmp_path_factory, "build_sdist", names)


class TestSdist:
    def test_ships_all_of_tests_or_none(self, sdist: Path) -> None:
        """None of tests/ is shipped (the suite needs the whole checkout), not a part of it."""
        with tarfile.open(sdist) as tar:
            names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
        assert not [n for n in names if n == "tests" or n.startswith("tests/")]
        tops = {n.split("/")[0] for n in names}
        assert {"compaction", "prompts", "harness", "README.md", "pyproject.toml"} <= tops
        assert "compaction/contract.py" in names
        assert "harness/simulation/data/tools.json" in names

    def test_metadata_for_the_index_page(self, sdist: Path) -> None:
        """PKG-INFO carries classifiers, project URLs and keywords (what PyPI's page shows)."""
        with tarfile.open(sdist) as tar:
            member = next(
                m
                for m in tar.getmembers()
                if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")
            )
            extracted = tar.extractfile(member)
            assert extracted is not None
            info = extracted.read().decode("utf-8")
        headers = [line.split(":", 1)[0] for line in info.splitlines() if ": " in line]
        assert headers.count("Classifier") >= 10
        assert "License :: OSI Approved :: MIT License" in info
        assert {"Project-URL", "Keywords", "Requires-Python"} <= set(headers)
        assert "Project-URL: Issues, " in info


class TestBenchFromCheckout:
    def test_finds_the_checkout(self, tmp_path: Path) -> None:
        """From an editable install, bench finds the suite beside the harness package."""
        assert find_checkout(tmp_path) == ROOT

    def test_finds_the_suite_from_the_working_folder(self, tmp_path: Path) -> None:
        """A checkout found through the working folder (or a parent) is used too."""
        (tmp_path / "benchmarks").mkdir()
        (tmp_path / "benchmarks" / "results_report.py").write_text("", encoding="utf-8")
        deep = tmp_path / "a" / "b"
        deep.mkdir(parents=True)
        found = find_checkout(deep)
        assert found in {ROOT, tmp_path}
