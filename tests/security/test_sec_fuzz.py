"""The safety fuzz (`benchmarks.attacks.fuzz_safety`) in small: no crash, no lost byte."""

from __future__ import annotations

import json
import random
from pathlib import Path

from benchmarks.attacks.fuzz_safety import Figures, main, template_text, todo_arguments


def test_small_fuzz_finds_nothing(tmp_path: Path) -> None:
    """A short seeded run tries every case and finds no crash and no lost byte."""
    out = tmp_path / "fuzz.json"
    assert main(["--cases", "40", "--seed", "3", "--out", str(out)]) == 0
    figures = json.loads(out.read_text())
    for target in ("todo_write", "templates"):
        assert figures[target]["cases"] == 40
        assert figures[target]["crashes"] == 0
        assert figures[target]["bytes_lost"] == 0
    assert figures["todo_write"]["accepted"] > 0
    assert figures["todo_write"]["rejected"] > 0
    assert figures["templates"]["rejected"] > 0


def test_cases_are_seeded() -> None:
    """The same seed gives the same cases."""
    a, b = random.Random(7), random.Random(7)
    assert [todo_arguments(a) for _ in range(20)] == [todo_arguments(b) for _ in range(20)]
    assert [template_text(a) for _ in range(20)] == [template_text(b) for _ in range(20)]


def test_crash_keeps_examples() -> None:
    """A crash is counted and its first examples kept for reproduction."""
    figures = Figures()
    for i in range(7):
        figures.crash(f"case {i}", "boom")
    assert figures.crashes == 7
    assert figures.examples == [f"boom: 'case {i}'" for i in range(5)]
