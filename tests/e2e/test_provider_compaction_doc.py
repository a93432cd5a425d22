"""Every Python block of docs/provider-compaction.md runs as pasted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "provider-compaction.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_doc_has_blocks() -> None:
    """The doc holds the four examples (a doc that lost them would pass the run test)."""
    assert len(BLOCKS) == 4


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_block_runs(block: str) -> None:
    """The block runs without error; its asserts are the checks."""
    exec(compile(block, str(DOC), "exec"), {"__name__": "doc"})
