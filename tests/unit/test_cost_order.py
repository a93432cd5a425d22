"""The suite's order: the costliest files first, by the committed table, new files by a guess."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import cost_order
import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class FakeItem:
    nodeid: str
    slow: bool = False

    def get_closest_marker(self, name: str) -> object | None:
        return object() if self.slow and name == "slow" else None


def _order(ids: list[FakeItem], table: dict[str, float]) -> list[str]:
    items = cast(list[pytest.Item], list(ids))
    cost_order.order_by_cost(items, table)
    return [item.nodeid for item in items]


class TestOrder:
    def test_costliest_file_first_and_a_files_tests_keep_their_order(self) -> None:
        items = [
            FakeItem("tests/a.py::t1"),
            FakeItem("tests/b.py::t1"),
            FakeItem("tests/a.py::t2"),
            FakeItem("tests/b.py::t2"),
        ]
        table = {"tests/a.py": 1.0, "tests/b.py": 9.0}
        assert _order(items, table) == [
            "tests/b.py::t1",
            "tests/b.py::t2",
            "tests/a.py::t1",
            "tests/a.py::t2",
        ]

    def test_a_file_the_table_does_not_name_is_guessed_per_test(self) -> None:
        """Three unknown tests (0.15 s) go before a known 0.1 s file; a slow one before both."""
        items = [
            FakeItem("tests/known.py::t"),
            FakeItem("tests/new.py::t1"),
            FakeItem("tests/new.py::t2"),
            FakeItem("tests/new.py::t3"),
            FakeItem("tests/new_slow.py::t", slow=True),
        ]
        order = _order(items, {"tests/known.py": 0.1})
        assert order == [
            "tests/new_slow.py::t",
            "tests/new.py::t1",
            "tests/new.py::t2",
            "tests/new.py::t3",
            "tests/known.py::t",
        ]

    def test_equal_costs_keep_the_collection_order(self) -> None:
        items = [FakeItem("tests/z.py::t"), FakeItem("tests/y.py::t")]
        assert _order(items, {}) == ["tests/z.py::t", "tests/y.py::t"]


class TestTable:
    def test_rows_sum_by_file_costliest_first(self) -> None:
        rows = [
            {"id": "tests/a.py::t1", "self": 1.0, "child": 0.5},
            {"id": "tests/b.py::t[x]", "self": 0.25, "child": 0.0},
            {"id": "tests/a.py::C::t2", "self": 0.1, "child": 2.0},
        ]
        doc = cost_order.table_from_rows(rows)
        assert list(cast(dict[str, float], doc["files"]).items()) == [
            ("tests/a.py", 3.6),
            ("tests/b.py", 0.25),
        ]

    def test_a_test_measured_again_counts_its_last_row(self) -> None:
        rows = [
            {"id": "tests/a.py::t", "self": 9.0, "child": 0.0},
            {"id": "tests/a.py::u", "self": 1.0, "child": 0.0},
            {"id": "tests/a.py::t", "self": 0.5, "child": 0.5},
        ]
        files = cast(dict[str, float], cost_order.table_from_rows(rows)["files"])
        assert files == {"tests/a.py": 2.0}

    def test_the_committed_table_names_existing_files(self) -> None:
        """A renamed file would lose its place silently: the table must be regenerated."""
        table = cost_order.load_table()
        assert table, "tests/cpu_costs.json is missing or empty"
        missing = sorted(name for name in table if not (ROOT / name).is_file())
        assert missing == [], f"regenerate tests/cpu_costs.json (see CONTRIBUTING.md): {missing}"

    def test_main_prints_the_table(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        rows = tmp_path / "cpu.gw0.jsonl"
        rows.write_text(json.dumps({"id": "tests/a.py::t", "self": 2, "child": 1}) + "\n")
        assert cost_order.main([str(rows)]) == 0
        assert json.loads(capsys.readouterr().out)["files"] == {"tests/a.py": 3.0}
