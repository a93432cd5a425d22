"""docs/loop.md: its complete example runs as written and prints what the doc says."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "loop.md"


def test_the_all_together_example_runs_and_prints_the_documented_lines() -> None:
    """The last python block of docs/loop.md runs; its printed lines match its comments."""
    block = DOC.read_text(encoding="utf-8").split("## All together")[1]
    code = block.split("```python\n", 1)[1].split("```", 1)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {})  # the doc's own code, from this repository
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("Context compacted: events 1..")
    assert lines[1] == "1 1"
