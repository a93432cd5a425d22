"""Next Step follows the code-owned sections: todo items and shared tasks alike.

The shapes are the real ones: Claude Code 2.1's TaskCreate/TaskUpdate sessions (several tasks,
one in progress, earlier ones completed), and the statements their agents wrote just before a
compaction ("Now let me dispatch the implementer for Task 1", "Do you want me to proceed to
Phase 2 (Pattern ...?").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction import CompactionPolicy, Message, Session, Task, TodoItem, compact
from compaction.events import JobRef
from compaction.importers import load
from compaction.summarizers._entries import clip_at_clause
from compaction.summarizers.next_step import names_task_id, next_step, target

TASK_FILE = "claude-code-2.1_entire-cli_64-df6ebeea39_taskcreate-taskupdate.jsonl"


def task(
    task_id: str,
    subject: str,
    status: str = "pending",
    owner: str | None = None,
    blocked_by: tuple[str, ...] = (),
) -> Task:
    return Task.model_validate(
        {
            "id": task_id,
            "subject": subject,
            "status": status,
            "owner": owner,
            "blocked_by": blocked_by,
        }
    )


BOARD = (
    task("1", "Add outputHookMessage helper to hooks.go", "completed"),
    task("2", "Add wingman stop notification to commitWithMetadata", "in_progress"),
    task("3", "Run fmt, lint, and tests", "pending", blocked_by=("2",)),
)


class TestTasks:
    def test_names_the_task_in_progress_by_id_and_subject(self) -> None:
        """With only shared tasks, Next Step names the task in progress: id and subject."""
        step = next_step("The suite compiles.", (), "go", tasks=BOARD)
        assert step.startswith(
            'Continue the task in progress: task 2 "Add wingman stop notification to '
            'commitWithMetadata"'
        )

    def test_a_statement_naming_a_completed_task_is_replaced(self) -> None:
        """'Dispatching the implementer for Task 1' while task 1 is done names task 2 instead."""
        text = "Now let me dispatch the implementer for Task 1."
        step = next_step(text, (), "go", tasks=BOARD)
        assert step == (
            'Continue the task in progress: task 2 "Add wingman stop notification to '
            'commitWithMetadata"'
        )
        assert not names_task_id(step, "1")

    def test_a_statement_naming_the_task_by_id_is_kept(self) -> None:
        """A statement that names the task in progress by its id stays as written."""
        text = "Next I wire the call into Task 2's early return."
        assert next_step(text, (), "go", tasks=BOARD) == text

    def test_a_statement_without_the_id_follows_the_named_task(self) -> None:
        """'All green. Now commit and push.' (no id): the task is named, the text follows."""
        board = (task("9", "Run fmt, lint, test and commit+push", "in_progress"),)
        step = next_step("All green. Now commit and push.", (), "go", tasks=board)
        assert step == (
            'Continue the task in progress: task 9 "Run fmt, lint, test and commit+push"\n'
            "Planned just before this Checkpoint: All green. Now commit and push."
        )

    def test_the_calling_agents_own_task_comes_first(self) -> None:
        """Several tasks in progress: the calling agent's own one, else the first."""
        board = (
            task("4", "Parse the config", "in_progress", owner="w1"),
            task("5", "Write the docs", "in_progress", owner="w2"),
        )
        assert target((), board, "w2") is not None
        assert next_step("ok", (), "go", tasks=board, agent="w2").startswith(
            'Continue the task in progress: task 5 "Write the docs"'
        )
        assert next_step("ok", (), "go", tasks=board, agent="lead").startswith(
            'Continue the task in progress: task 4 "Parse the config"'
        )

    def test_a_pending_task_waits_for_its_blockers(self) -> None:
        """Nothing in progress: the first pending task whose blockers are finished is started."""
        board = (
            task("1", "Parse", "completed"),
            task("2", "Test", "pending", blocked_by=("3",)),
            task("3", "Build", "pending", blocked_by=("1",)),
        )
        assert next_step("Done.", (), "go", tasks=board) == (
            'Start the next pending task: task 3 "Build"'
        )

    @pytest.mark.parametrize(
        "text",
        [
            "Do you want me to proceed to Phase 2 (Pattern matching)?",
            "All tasks are complete.",
            "Finished: ready for review.",
        ],
    )
    def test_never_asks_or_claims_done_while_a_task_is_open(self, text: str) -> None:
        """A question or a done claim with an open task becomes the task, nothing planned."""
        step = next_step(text, (), "go", tasks=BOARD)
        assert step == (
            'Continue the task in progress: task 2 "Add wingman stop notification to '
            'commitWithMetadata"'
        )

    def test_a_completed_todo_item_is_never_named(self) -> None:
        """A statement naming a completed todo item is replaced by the one in progress."""
        todos = (
            TodoItem(content="Write the failing test for export", status="completed"),
            TodoItem(content="Implement the CSV writer", status="in_progress"),
        )
        step = next_step("Write the failing test for export again.", todos, "go")
        assert step == "Continue the task in progress: Implement the CSV writer"

    def test_await_user_agrees_with_a_resume_decision(self) -> None:
        """With a resume decision to wait for the user, Next Step waits, naming the open task."""
        step = next_step("Shall I go on?", (), "go", tasks=BOARD, resume="await_user")
        assert step.startswith("Wait for the user's reply to the latest request")
        assert "task 2" in step
        assert "?" not in step


class TestClipping:
    def test_a_long_question_is_caught_before_the_cut(self) -> None:
        """A question past the clip limit is still a question (checked on the whole text)."""
        text = "I reviewed the module. " * 40 + "Do you want me to proceed to Phase 2 (Pattern?"
        todos = (TodoItem(content="Review the module", status="in_progress"),)
        step = next_step(text, todos, "go", limit=200)
        assert step == "Continue the task in progress: Review the module"

    def test_cut_at_a_sentence_end_never_mid_word(self) -> None:
        """Text over the limit is cut after its last sentence end; no word is split."""
        text = "Add the writer first. Then wire the flag into the parser module and its tests."
        step = next_step(text, (), "go", limit=40)
        assert step.startswith("Add the writer first.")
        assert step.endswith("more characters]")
        head = step.split(" [")[0]
        assert all(word in text.split() for word in head.split())

    @pytest.mark.parametrize(
        ("text", "limit", "head"),
        [
            ("One two three, four five six seven eight nine", 30, "One two three,"),
            ("Alpha beta gamma delta epsilon zeta eta theta", 20, "Alpha beta gamma"),
            ("short", 20, "short"),
        ],
    )
    def test_clause_and_word_cuts(self, text: str, limit: int, head: str) -> None:
        """Without a sentence end, the cut falls at a clause end, else at a space."""
        assert clip_at_clause(text, limit).split(" [")[0] == head


def _import_prefix(path: Path, cut: int, into: Session) -> None:
    for event in list(load(path))[:cut]:
        into.append(event.data)


class TestRealTaskSession:
    def test_next_step_names_the_task_in_progress_at_every_cut(
        self, transcripts: Path, tmp_path: Path
    ) -> None:
        """The shared TaskCreate/TaskUpdate session, cut where a task is in progress."""
        path = transcripts / TASK_FILE
        checked = 0
        for cut in (30, 45, 60, 80, 165, 175, 195, 225):
            with Session(tmp_path / f"cut{cut}.jsonl") as session:
                _import_prefix(path, cut, session)
                running = [t for t in session.tasks.live() if t.status == "in_progress"]
                done = [t.id for t in session.tasks.live() if t.status == "completed"]
                policy = CompactionPolicy(window_tokens=16_000, retain=0.0)
                step = compact(session, policy, force=True).checkpoint.next_step
            assert len(running) == 1
            name = f"task {running[0].id} {json.dumps(running[0].subject)}"
            assert step.startswith(f"Continue the task in progress: {name}"), (cut, step)
            assert not any(names_task_id(step.removeprefix(name), d) for d in done), step
            checked += 1
        assert checked == 8

    def test_several_agents_own_task_leads(self, tmp_path: Path) -> None:
        """Through `compact`: the session's agent's own task in progress leads Next Step.

        The turn ended with the agent's answer (resume ``await_user``), so Next Step waits for
        the user first, then names the agent's own task by id and subject.
        """
        with Session(tmp_path / "s.jsonl", agent="w2") as session:
            session.start_turn("Split the work", mode="team")
            for subject in ("Parse the config", "Write the docs"):
                assert not session.task_create({"subject": subject}).is_error
            for task_id, owner in (("1", "w1"), ("2", "w2")):
                update = {"id": task_id, "status": "in_progress", "owner": owner}
                assert not session.task_update(update, agent=owner).is_error
            session.append(Message(role="assistant", content="Shall I continue?"))
            result = compact(session, CompactionPolicy(window_tokens=8000), force=True)
        step = result.checkpoint.next_step
        assert result.data.resume == "await_user"
        assert step.startswith("- Wait for the user's next request")
        assert step.endswith('continue the task in progress: task 2 "Write the docs"')


class TestNothingOpen:
    def test_a_next_step_about_finished_work_is_not_carried(self) -> None:
        """All items completed: a Next Step naming one of them gives way to the latest request."""
        todos = (TodoItem(content="Run the API test suite", status="completed"),)
        step = next_step("Continue the task in progress: Run the API test suite", todos, "go")
        assert step.startswith("Answer the user's latest request")
        assert next_step("Now run the API test suite.", todos, "") == ""


class TestRunningJobs:
    JOBS = (JobRef(id="b7b23b2", kind="command", runs="npm run e2e", since=4),)

    @pytest.mark.parametrize("text", ["All done: the feature is finished.", "", "Shall I stop?"])
    def test_a_done_claim_names_the_running_job(self, text: str) -> None:
        """With nothing else open, "done", silence or a question give way to the running job."""
        step = next_step(text, (), "Ship it", jobs=self.JOBS)
        assert step.startswith("Check on the jobs still running")
        assert 'job b7b23b2 "npm run e2e"' in step

    def test_other_text_stands_while_a_job_runs(self) -> None:
        """A Next Step that does not call the work done is kept."""
        step = next_step("Read the e2e log when it lands.", (), "go", jobs=self.JOBS)
        assert step == "Read the e2e log when it lands."

    def test_without_jobs_a_done_claim_stands(self) -> None:
        """Nothing open and no job: the text is kept as before."""
        assert next_step("All done.", (), "go") == "All done."

    def test_judged_on_the_clipped_text(self) -> None:
        """A done claim past the clip is not in the Checkpoint, so it does not count."""
        text = "Wire the flag into the parser. " * 10 + "Then everything is done."
        todos = (TodoItem(content="Wire the flag into the parser", status="in_progress"),)
        step = next_step(text, todos, "go", limit=100)
        assert step.startswith("Wire the flag into the parser.")
        assert "done" not in step
