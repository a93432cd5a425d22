"""Write a pyproject.toml whose [tool.mutmut] mutates one group of [tool.mutate-groups].

Usage: mutate_group.py NAME SOURCE_PYPROJECT TARGET_PYPROJECT (called by `scripts/mutate --group`).
The group's `only_mutate` and `tests` replace the main configuration's lists; every other
[tool.mutmut] key (source paths, pytest arguments, files copied) is kept.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path


def group_config(pyproject: str, name: str) -> str:
    """The text of `pyproject` with its [tool.mutmut] table set to group `name`'s."""
    data = tomllib.loads(pyproject)
    groups = data["tool"].get("mutate-groups", {})
    if name not in groups:
        known = ", ".join(sorted(groups)) or "none"
        raise SystemExit(f"mutate: no group {name!r} in [tool.mutate-groups] (known: {known})")
    conf = dict(data["tool"]["mutmut"])
    conf["only_mutate"] = groups[name]["only_mutate"]
    conf["pytest_add_cli_args_test_selection"] = groups[name]["tests"]
    kept: list[str] = []
    inside = False
    for line in pyproject.splitlines():
        if line.startswith("["):
            inside = line.strip() == "[tool.mutmut]"
        if not inside:
            kept.append(line)
    table = ["[tool.mutmut]", *(f"{key} = {json.dumps(value)}" for key, value in conf.items())]
    return "\n".join([*kept, "", *table, ""])


def main(argv: list[str]) -> None:
    """Write group `argv[0]`'s configuration from `argv[1]` to `argv[2]`."""
    name, source, target = argv
    Path(target).write_text(group_config(Path(source).read_text("utf-8"), name), "utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
