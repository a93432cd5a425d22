"""Each sub-package root exports what callers outside it use, and nothing else.

The lists are derived, never retyped: a root's ``__all__`` is read from the root, and its
callers from the product code and the docs' Python blocks (`api_usage`). A name only tests use
is no reason to export it (tests import private modules). The top-level roots (`compaction`,
`prompts`, `harness`) are the host API and the kit `harness.testing` is for users: their lists
are checked in their own tests.
"""

from __future__ import annotations

import importlib

import pytest
from api_usage import outside_callers, roots

USER_FACING = {"compaction", "prompts", "harness", "harness.testing"}
"""Roots whose callers are users (hosts, the test kit's users), not only this code."""
SUBPACKAGES = [root for root in roots() if root not in USER_FACING]


def test_the_roots_are_found() -> None:
    """The scan finds the rooms (a scan that found none would check nothing)."""
    assert {"compaction.stores", "compaction.tools", "compaction.views"} <= set(SUBPACKAGES)


@pytest.mark.parametrize("root", roots())
def test_all_is_sorted_unique_and_importable(root: str) -> None:
    """__all__ has no repeats, and every name in it imports from the root."""
    module = importlib.import_module(root)
    assert len(module.__all__) == len(set(module.__all__))
    assert sorted(module.__all__) == sorted(set(module.__all__))
    namespace: dict[str, object] = {}
    if module.__all__:
        exec(f"from {root} import {', '.join(module.__all__)}", namespace)
    assert set(module.__all__) <= set(namespace)


@pytest.mark.parametrize("root", SUBPACKAGES)
def test_each_name_has_a_caller_outside(root: str) -> None:
    """Every exported name is imported by a module outside the sub-package, or by the docs."""
    module = importlib.import_module(root)
    unused = [name for name in module.__all__ if not outside_callers(root, name)]
    assert unused == []


def test_llm_root_holds_no_summarizer() -> None:
    """compaction.llm is the client only: the summarizer is one floor up, in summarizers."""
    llm = importlib.import_module("compaction.llm")
    assert not hasattr(llm, "OpenAISummarizer")
    summarizers = importlib.import_module("compaction.summarizers")
    assert summarizers.OpenAISummarizer.__module__ == "compaction.summarizers._llm"
