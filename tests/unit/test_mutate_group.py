"""`scripts/mutate --group NAME`: the configuration a group's run uses."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from scripts.mutate_group import group_config

ROOT = Path(__file__).resolve().parents[2]


def test_a_group_replaces_the_modules_and_tests_and_keeps_the_rest() -> None:
    """The group's lists replace [tool.mutmut]'s; its other keys and every other table stay."""
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    main = tomllib.loads(text)
    made = tomllib.loads(group_config(text, "sqlite"))
    conf = made["tool"]["mutmut"]
    assert conf["only_mutate"] == [
        "compaction/stores/_sqlite.py",
        "compaction/stores/_sqlite_checks.py",
    ]
    assert (
        conf["pytest_add_cli_args_test_selection"]
        == main["tool"]["mutate-groups"]["sqlite"]["tests"]
    )
    for key in ("source_paths", "also_copy", "pytest_add_cli_args"):
        assert conf[key] == main["tool"]["mutmut"][key]
    assert made["project"] == main["project"]
    assert made["tool"]["pytest"] == main["tool"]["pytest"]


def test_every_group_names_files_that_exist() -> None:
    """A group's modules and tests are files of the checkout (a glob names at least one).

    A test given as a node id (`FILE::Class` or `FILE::test`) names a class or function of FILE.
    """
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["mutate-groups"]
    for group in groups.values():
        tests = group["tests"]
        options = {i for i, arg in enumerate(tests) if arg.startswith("-")}
        options |= {i + 1 for i in options if tests[i] == "-k"}  # -k takes an expression
        paths = [arg for i, arg in enumerate(tests) if i not in options]
        for path in [*group["only_mutate"], *paths]:
            if "*" in path:  # a glob, as mutmut takes it: it must name at least one file
                assert any(p.is_file() for p in ROOT.glob(path)), path
            else:
                file, *node = path.split("::")
                assert (ROOT / file).is_file(), path
                if node:  # the top-level name: `class X` or `def x` at the start of a line
                    text = (ROOT / file).read_text("utf-8")
                    assert re.search(rf"^(class|def) {re.escape(node[0])}\b", text, re.M), path


def test_an_unknown_group_is_refused_with_the_known_ones() -> None:
    """A misspelt group name stops the run, listing the groups."""
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    with pytest.raises(SystemExit, match=r"no group 'sqlit' in \[tool.mutate-groups\] \(known: "):
        group_config(text, "sqlit")
