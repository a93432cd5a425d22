"""The suite's own process set-up (tests/conftest.py): the cyclic collector after collection."""

from __future__ import annotations

import gc
import sys
import weakref


class Node:
    """An object that can sit in a reference cycle."""

    def __init__(self) -> None:
        self.other: Node | None = None


class TestCollectorFrozenAfterCollection:
    def test_what_collection_made_is_out_of_the_collectors_reach(self) -> None:
        """A module collection imported is frozen, so a full collection does not walk it."""
        assert gc.get_freeze_count() > 0
        tracked = {id(obj) for obj in gc.get_objects()}
        assert id(sys.modules[__name__].__dict__) not in tracked

    def test_what_a_test_makes_is_still_collected(self) -> None:
        """A reference cycle made by a test is freed by the collector as before."""
        first, second = Node(), Node()
        first.other, second.other = second, first
        gone = weakref.ref(first)
        del first, second
        gc.collect()
        assert gone() is None
