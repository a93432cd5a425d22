"""The order the suite runs in: the costliest test files first, by a committed table of CPU seconds.

Under ``pytest -n auto --dist worksteal`` each worker takes a contiguous share of the collection
and an idle worker steals the back half of a busy one's queue, so what decides the wall time is
when the long tests start: one started last keeps one worker busy while the other idles. Sorting
the files by cost puts every long test at the head of the run, and the cheap ones at the back are
what gets stolen.

The table, ``tests/cpu_costs.json``, holds each test file's CPU seconds (its tests', their
fixtures' and their subprocesses', as `cpu_durations` measured them). A file it does not name (one
added since) counts `DEFAULT_TEST_COST` per test, `SLOW_TEST_COST` per test marked ``slow``, so a
new slow test still starts early; a renamed or deleted file is just not found. Regenerate the
table after a change that moves a test's cost (see CONTRIBUTING.md, "Test suite speed")::

    PYTHONPATH=tests CPU_DURATIONS=/tmp/cpu .venv/bin/pytest -q -p cpu_durations -n auto
    .venv/bin/python tests/cost_order.py /tmp/cpu.*.jsonl > tests/cpu_costs.json

(use a fresh ``CPU_DURATIONS`` prefix: the plugin appends).

Invariants: the order depends on the table and the collection only (every xdist worker must
collect the same order); tests of one file keep their order and stay together, so module- and
class-scoped fixtures are set up once per worker as before.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pytest

TABLE = Path(__file__).with_name("cpu_costs.json")
DEFAULT_TEST_COST = 0.05
"""CPU seconds assumed for a test in a file the table does not name (most tests cost less)."""
SLOW_TEST_COST = 5.0
"""CPU seconds assumed for a test marked ``slow`` in a file the table does not name."""


def load_table(path: Path = TABLE) -> dict[str, float]:
    """Return the committed CPU seconds per test file (empty when the table is absent)."""
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {str(name): float(cost) for name, cost in doc["files"].items()}


def file_of(nodeid: str) -> str:
    """Return the test file of a node id (``tests/e2e/test_x.py::T::test_y[p]``)."""
    return nodeid.split("::", 1)[0]


def guessed_cost(item: pytest.Item) -> float:
    """The cost assumed for a test its file's entry does not cover."""
    return SLOW_TEST_COST if item.get_closest_marker("slow") is not None else DEFAULT_TEST_COST


def order_by_cost(items: list[pytest.Item], table: Mapping[str, float]) -> None:
    """Sort `items` in place: files by cost, costliest first; a file's tests stay in order.

    Ties (and files of equal guessed cost) keep the collection's order.
    """
    costs: dict[str, float] = {}
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        name = file_of(item.nodeid)
        first.setdefault(name, index)
        if name not in table:
            costs[name] = costs.get(name, 0.0) + guessed_cost(item)
    costs.update({name: table[name] for name in first if name in table})
    position = {id(item): index for index, item in enumerate(items)}
    items.sort(
        key=lambda item: (
            -costs[file_of(item.nodeid)],
            first[file_of(item.nodeid)],
            position[id(item)],
        )
    )


def table_from_rows(rows: Iterable[Mapping[str, object]]) -> dict[str, object]:
    """Sum `cpu_durations` rows (``id``, ``self``, ``child``) into the table's document.

    A test measured twice counts its last row (so a file measured again after a change can be
    named after the whole run's files).
    """
    latest = {str(row["id"]): float(str(row["self"])) + float(str(row["child"])) for row in rows}
    files: dict[str, float] = {}
    for nodeid, cost in latest.items():
        name = file_of(nodeid)
        files[name] = files.get(name, 0.0) + cost
    ranked = sorted(files.items(), key=lambda pair: (-pair[1], pair[0]))
    return {
        "about": "CPU seconds per test file; tests/cost_order.py runs the costliest first",
        "files": {name: round(cost, 2) for name, cost in ranked},
    }


def main(argv: Sequence[str]) -> int:
    """Print the table summed from the ``cpu_durations`` JSON-lines files named in `argv`."""
    if not argv:
        print("usage: python tests/cost_order.py CPU_DURATIONS.*.jsonl > tests/cpu_costs.json")
        return 2
    rows = [
        json.loads(line)
        for name in argv
        for line in Path(name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    print(json.dumps(table_from_rows(rows), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
