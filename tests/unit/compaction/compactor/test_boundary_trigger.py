"""The task-boundary trigger: compact right after an item is completed, past a floor."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from loop_sessions import reads, say, todos

from compaction import (
    CompactionError,
    CompactionPolicy,
    ConfigError,
    Session,
    compact,
    maybe_compact,
)
from compaction.policy import DEFAULT_BOUNDARY

WINDOW = 10_000
BOUNDARY = CompactionPolicy(window_tokens=WINDOW, boundary_threshold=0.5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"boundary_threshold": 0.0}, r"boundary_threshold must be in \(0, threshold=0.9\]"),
        ({"boundary_threshold": 0.95}, r"boundary_threshold must be in \(0, threshold=0.9\]"),
        ({"boundary_threshold": -0.1}, "boundary_threshold must be in"),
        ({"boundary_threshold": float("nan")}, "boundary_threshold must be a number, 'auto' or"),
        ({"boundary_threshold": True}, "boundary_threshold must be a number, 'auto' or None"),
        ({"boundary_threshold": "0.5"}, "boundary_threshold must be a number, 'auto' or None"),
        ({"boundary_threshold": 0.07}, r"must stay below boundary_threshold \(0.07\)"),
    ],
)
def test_bad_boundaries_are_refused_at_construction(
    kwargs: dict[str, object], message: str
) -> None:
    """Each bad value is named; a boundary at or below retain + summary could not shrink."""
    with pytest.raises(ConfigError, match=message):
        CompactionPolicy(**kwargs)  # type: ignore[arg-type]


class TestIsDue:
    floor = int(0.5 * WINDOW)

    @pytest.mark.parametrize(
        ("tokens", "completed", "due"),
        [
            (floor - 1, 1, False),
            (floor, 1, True),
            (floor, 0, False),
            (floor + 100, 3, True),
            (int(0.9 * WINDOW), 0, True),  # the size trigger still holds
            (int(0.9 * WINDOW) - 1, 0, False),
        ],
    )
    def test_due_at_the_floor_only_after_a_completion(
        self, tokens: int, completed: int, due: bool
    ) -> None:
        """Exactly at the floor with a completion; never below it; the size trigger unchanged."""
        assert BOUNDARY.is_due(tokens, completed=completed) is due

    def test_fixed_tokens_and_the_reserve_count(self) -> None:
        """The floor is the whole request: fixed part included, the reply's reserve set aside."""
        policy = CompactionPolicy(window_tokens=WINDOW, boundary_threshold=0.5, output_reserve=500)
        assert policy.boundary_tokens == self.floor - 500
        assert policy.is_due(self.floor - 600, 100, completed=1)
        assert not policy.is_due(self.floor - 601, 100, completed=1)

    def test_without_a_boundary_only_size_counts(self) -> None:
        """``boundary_threshold=None`` turns the trigger off: only size counts."""
        plain = CompactionPolicy(window_tokens=WINDOW, boundary_threshold=None)
        assert plain.boundary_share is None
        assert plain.boundary_tokens is None
        assert not plain.is_due(int(0.79 * WINDOW), completed=5)


class TestAutoBoundary:
    """The default floor: `DEFAULT_BOUNDARY` where it is valid for the policy, else none."""

    def test_the_default_policy_has_the_default_floor(self) -> None:
        """Left at "auto", the floor is DEFAULT_BOUNDARY of the window."""
        policy = CompactionPolicy(window_tokens=WINDOW)
        assert policy.boundary_threshold == "auto"
        assert policy.boundary_share == DEFAULT_BOUNDARY
        assert policy.boundary_tokens == int(DEFAULT_BOUNDARY * WINDOW)
        assert policy.is_due(int(DEFAULT_BOUNDARY * WINDOW), completed=1)
        assert not policy.is_due(int(DEFAULT_BOUNDARY * WINDOW) - 1, completed=1)
        assert not policy.is_due(int(0.89 * WINDOW), completed=0)

    @pytest.mark.parametrize(
        ("threshold", "retain"),
        [
            (DEFAULT_BOUNDARY - 0.1, 0.1),  # the floor would sit above the trigger
            (0.9, DEFAULT_BOUNDARY - 0.02),  # a boundary compaction could not shrink the context
        ],
    )
    def test_where_the_floor_is_invalid_there_is_none(
        self, threshold: float, retain: float
    ) -> None:
        """A low threshold or a long tail stays a valid policy: "auto" means no boundary."""
        policy = CompactionPolicy(window_tokens=WINDOW, threshold=threshold, retain=retain)
        assert policy.boundary_share is None
        assert not policy.is_due(int(policy.threshold * WINDOW) - 1, completed=3)

    def test_an_explicit_floor_is_validated_as_given(self) -> None:
        """The same share given explicitly where it is invalid is refused, as before."""
        with pytest.raises(ConfigError, match="boundary_threshold must be in"):
            CompactionPolicy(threshold=DEFAULT_BOUNDARY - 0.1, boundary_threshold=DEFAULT_BOUNDARY)

    @given(
        threshold=st.floats(min_value=0.05, max_value=1.0),
        retain=st.floats(min_value=0.0, max_value=0.9),
    )
    def test_auto_is_always_valid_and_within_bounds(self, threshold: float, retain: float) -> None:
        """Property: a policy valid without a boundary is valid with "auto".

        The floor in effect is None or lies in (retain + summary_share, threshold].
        """
        try:
            CompactionPolicy(threshold=threshold, retain=retain, boundary_threshold=None)
        except ConfigError:
            return
        policy = CompactionPolicy(threshold=threshold, retain=retain)
        share = policy.boundary_share
        assert share is None or policy.retain + policy.summary_share < share <= threshold


def halfway(path: Path) -> Session:
    """A turn whose request passes the 0.5 floor, with one item in progress and one pending."""
    session = Session(path)
    session.start_turn("Fix the parser, then write the docs")
    session.todo_write(todos(("Fix the parser", "in_progress"), ("Write the docs", "pending")))
    reads(session, [f"src/m{i}.py" for i in range(12)], size=70)
    assert int(0.5 * WINDOW) <= session.context_tokens < int(0.8 * WINDOW)
    return session


class TestMaybeCompact:
    def test_a_completed_item_past_the_floor_compacts(self, log_path: Path) -> None:
        """Below the size trigger, a completion makes maybe_compact compact; tasks stay."""
        with halfway(log_path) as session:
            assert maybe_compact(session, BOUNDARY) is None  # no completion yet
            session.todo_write(
                todos(("Fix the parser", "completed"), ("Write the docs", "pending"))
            )
            r = maybe_compact(session, BOUNDARY)
            assert r is not None
            assert r.event is not None
            assert r.checkpoint.pending_jobs == ("Write the docs",)
            assert session.progress.completed_since_checkpoint == 0
            assert maybe_compact(session, BOUNDARY) is None  # the completion was used up

    def test_the_boundary_passes_with_the_next_model_call(self, log_path: Path) -> None:
        """A completion not compacted at once never fires later, mid-way through the next item."""
        with halfway(log_path) as session:
            session.todo_write(
                todos(("Fix the parser", "completed"), ("Write the docs", "in_progress"))
            )
            assert session.progress.completed_since_call == 1
            session.add_message(say("Now the docs."))  # the model was called: the boundary passed
            assert session.progress.completed_since_call == 0
            assert session.progress.completed_since_checkpoint == 1
            reads(session, [f"src/n{i}.py" for i in range(2)], size=70)
            assert session.context_tokens < int(0.9 * WINDOW)
            assert maybe_compact(session, BOUNDARY) is None  # mid-task: the size trigger only

    def test_a_completed_shared_task_counts_too(self, log_path: Path) -> None:
        """task_update to completed is a boundary like a todo item."""
        with halfway(log_path) as session:
            session.task_create({"subject": "Review"})
            session.task_update({"id": "1", "status": "in_progress"})
            assert maybe_compact(session, BOUNDARY) is None
            session.task_update({"id": "1", "status": "completed"})
            assert maybe_compact(session, BOUNDARY) is not None

    def test_rewriting_a_completed_item_is_not_a_new_boundary(self, log_path: Path) -> None:
        """An item already completed in the previous list does not count again."""
        with halfway(log_path) as session:
            done = todos(("Fix the parser", "completed"), ("Write the docs", "pending"))
            session.todo_write(done)
            assert maybe_compact(session, BOUNDARY) is not None
            reads(session, [f"src/n{i}.py" for i in range(12)], size=70)
            session.todo_write(done)
            assert session.progress.completed_since_checkpoint == 0
            assert maybe_compact(session, BOUNDARY) is None

    def test_compact_without_force_honours_the_boundary(self, log_path: Path) -> None:
        """`compact` agrees with `maybe_compact`: below the floor it is below the threshold."""
        with Session(log_path) as session:
            session.start_turn("Small")
            session.todo_write(todos(("A", "completed")))
            with pytest.raises(CompactionError, match="below_threshold"):
                compact(session, BOUNDARY)
