"""Reads and the lazy usage fold pause the cyclic garbage collector, and always resume it."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from compaction import Session
from compaction.stores.sources import PROMOTE_AT, collector_paused, promote_survivors
from compaction.views import TodosProjection, UsageProjection


def numbers(n: int) -> Iterator[int]:
    """Yield 0..n-1, recording nothing: a stand-in for a stream of events."""
    yield from range(n)


def fail_on_first(items: Iterator[int]) -> None:
    """Consume `items`, raising on the first one (a fold that meets a bad event)."""
    for _ in items:
        raise ZeroDivisionError


@pytest.fixture
def collector_on() -> Iterator[None]:
    """Start with the collector on and nothing frozen; leave it as the test found it.

    The suite's conftest freezes what collection made (`pytest_collection_finish`); a frozen
    process is one `promote_survivors` must leave alone, so these tests start from an unfrozen
    one, as a user's process is, and freeze again afterwards.
    """
    was = gc.isenabled()
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    gc.enable()
    yield
    if frozen:
        gc.freeze()
    if not was:
        gc.disable()


@pytest.mark.usefixtures("collector_on")
class TestCollectorPaused:
    def test_off_while_yielding_on_after(self) -> None:
        """The collector is off while the events are consumed, and on again at the end."""
        seen = [gc.isenabled() for _ in collector_paused(numbers(3))]
        assert seen == [False, False, False]
        assert gc.isenabled()

    def test_on_again_when_the_reader_stops_early(self) -> None:
        """A consumer that breaks off (or raises) leaves the collector on once it drops the read."""
        reading = collector_paused(numbers(10))
        next(reading)
        assert not gc.isenabled()
        reading.close()
        assert gc.isenabled()
        with pytest.raises(ZeroDivisionError):
            fail_on_first(collector_paused(numbers(10)))
        assert gc.isenabled()

    def test_left_off_when_it_was_off(self) -> None:
        """A collector someone else turned off stays off after the read."""
        gc.disable()
        assert list(collector_paused(numbers(2))) == [0, 1]
        assert not gc.isenabled()

    def test_session_folds_with_the_collector_paused(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Opening a log folds every view, the usage view too, with the collector off; then on."""
        path = tmp_path / "s.jsonl"
        with Session(path) as s:
            s.start_turn("Fix the bug")
            s.add_message({"role": "assistant", "content": "On it."})
        states: dict[str, list[bool]] = {"todos": [], "usage": []}
        todos_apply, usage_apply = TodosProjection.apply, UsageProjection.apply

        def todos_spy(self: TodosProjection, state: object, event: object) -> object:
            states["todos"].append(gc.isenabled())
            return todos_apply(self, state, event)  # type: ignore[arg-type]

        def usage_spy(self: UsageProjection, state: object, event: object) -> object:
            states["usage"].append(gc.isenabled())
            return usage_apply(self, state, event)  # type: ignore[arg-type]

        monkeypatch.setattr(TodosProjection, "apply", todos_spy)
        monkeypatch.setattr(UsageProjection, "apply", usage_spy)
        with Session(path) as again:
            assert again.context_tokens > 0
            assert gc.isenabled()
            events = len(list(again.events()))
        assert len(states["usage"]) == events
        assert len(states["todos"]) >= events
        assert not any(states["todos"] + states["usage"])


def tracked_in(generations: tuple[int, ...], objects: Sequence[object]) -> int:
    """Return how many of `objects` the collector holds in the given generations."""
    wanted = {id(o) for o in objects}
    return sum(1 for g in generations for o in gc.get_objects(generation=g) if id(o) in wanted)


def long_log(path: Path, turns: int) -> None:
    """Write a log of a turn (its request a message) and `turns` user and assistant messages."""
    with Session(path, sync="batch") as s, s.batch():
        s.start_turn("Fix the bug")
        for k in range(turns):
            s.add_message({"role": "user", "content": f"step {k}"})
            s.add_message({"role": "assistant", "content": f"done {k}"})


@pytest.mark.usefixtures("collector_on")
class TestPromotion:
    def test_a_long_read_leaves_what_it_kept_in_the_oldest_generation(self, tmp_path: Path) -> None:
        """After a read of at least PROMOTE_AT events, the kept messages are in generation 2."""
        path = tmp_path / "s.jsonl"
        long_log(path, PROMOTE_AT)
        with Session(path) as again:
            kept: list[object] = list(again.context.messages)
            assert len(kept) == 2 * PROMOTE_AT + 1
            assert tracked_in((0, 1), kept) == 0
            assert tracked_in((2,), kept) == len(kept)

    def test_a_short_read_leaves_the_generations_alone(self, tmp_path: Path) -> None:
        """A read of fewer events (a refresh, a count batch) promotes nothing."""
        path = tmp_path / "s.jsonl"
        long_log(path, 3)
        gc.collect()
        with Session(path) as again:
            kept: list[object] = list(again.context.messages)
            assert tracked_in((0, 1), kept) == len(kept)

    def test_objects_the_process_froze_stay_frozen(self, tmp_path: Path) -> None:
        """A process that froze objects itself keeps them frozen through a long read."""
        path = tmp_path / "s.jsonl"
        long_log(path, PROMOTE_AT)
        gc.freeze()
        try:
            frozen = gc.get_freeze_count()
            with Session(path) as again:
                assert len(again.context.messages) == 2 * PROMOTE_AT + 1
            # Unfrozen, the count would be 0. It may drop by a few: a frozen object can still be
            # freed by reference counting (under mutmut's trampoline two are, during the read).
            assert frozen - 100 < gc.get_freeze_count() <= frozen
        finally:
            gc.unfreeze()

    def test_promote_survivors_moves_young_objects(self) -> None:
        """promote_survivors leaves no tracked object of this test in the young generations."""
        young = [[k] for k in range(100)]
        assert tracked_in((0, 1, 2), young) == len(young)
        promote_survivors()
        assert tracked_in((0, 1), young) == 0
        assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("collector_on")
class TestPromotionThreshold:
    @pytest.mark.parametrize(("n", "promoted"), [(2, False), (3, True), (4, True), (0, False)])
    def test_promotion_waits_for_promote_at_events(self, n: int, promoted: bool) -> None:
        """Exactly `promote_at` events yielded promote what is alive; one fewer leaves it young."""
        gc.collect()
        young = [[k] for k in range(50)]
        assert list(collector_paused(numbers(n), promote_at=3)) == list(range(n))
        assert gc.isenabled()
        assert tracked_in((0, 1), young) == (0 if promoted else len(young))

    def test_no_threshold_never_promotes(self) -> None:
        """`promote_at=None` (a count batch during appends) leaves the generations alone."""
        gc.collect()
        young = [[k] for k in range(50)]
        assert list(collector_paused(numbers(PROMOTE_AT + 1))) == list(range(PROMOTE_AT + 1))
        assert tracked_in((0, 1), young) == len(young)
