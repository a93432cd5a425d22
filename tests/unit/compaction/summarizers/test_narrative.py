"""The narrative rules, one class per section.

What the extractive summarizer writes, and what `check_output` holds any summarizer's narrative to.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction import (
    Checkpoint,
    CheckpointData,
    CompactionPolicy,
    ExtractiveSummarizer,
    FunctionCall,
    Message,
    Section,
    Session,
    SummaryInput,
    TodoItem,
    ToolCall,
    TurnStartData,
    compact,
)
from compaction.summarizers import check_output
from compaction.summarizers._extractive import split_entries
from compaction.summarizers.facts import error_lines, read_span, working_directory
from compaction.summarizers.recorded import read_recorded

TASK = "Add the CSV export"


def user(text: str, origin: str | None = None) -> Message:
    return Message.model_validate({"role": "user", "content": text, "origin": origin})


def say(text: str) -> Message:
    return Message(role="assistant", content=text)


def call(call_id: str, name: str, **args: object) -> Message:
    fn = FunctionCall(name=name, arguments=json.dumps(args))
    return Message(role="assistant", tool_calls=(ToolCall(id=call_id, function=fn),))


def result(call_id: str, text: str) -> Message:
    return Message(role="tool", tool_call_id=call_id, content=text)


def span(
    messages: list[Message],
    *,
    todos: tuple[TodoItem, ...] = (),
    previous: Checkpoint | None = None,
    modes: tuple[str | None, ...] = (),
    mode: str | None = None,
    instructions: str | None = None,
) -> SummaryInput:
    return SummaryInput(
        messages=tuple(messages),
        seqs=tuple(range(1, len(messages) + 1)),
        previous=previous,
        todos=todos,
        budget_tokens=4000,
        modes=modes,
        mode=mode,
        instructions=instructions,
    )


def summarize(s: SummaryInput) -> dict[Section, str]:
    """What the compactor does: the extractive summarizer, then the output check."""
    return check_output(ExtractiveSummarizer().summarize(s), s)


IN_PROGRESS = (TodoItem(content=TASK, status="in_progress"),)


class TestRequests:
    def test_only_typed_text_is_a_request(self) -> None:
        """Injected context, skill bodies, commands, notices and mode messages are no request."""
        injected = {
            "injected": "# AGENTS.md instructions for /repo: run make before commit",
            "skill": "Base directory for this skill: /skills/review. Review the PR thoroughly.",
            "command": "<command-name>/review</command-name> <command-args>this</command-args>",
            "interruption": "[Request interrupted by user for tool use]",
            "mode_switch": "<mode-switch> The mode is now Plan. Do not edit files. </mode-switch>",
        }
        messages = [user(text, origin) for origin, text in injected.items()]
        out = summarize(span([*messages, user("Fix the login bug in src/auth.py", "user")]))
        primary = out[Section.PRIMARY_REQUEST]
        assert split_entries(primary) == ["- Fix the login bug in src/auth.py"]
        for text in injected.values():
            assert text[:30] not in primary
            assert text[:30] not in out[Section.CRITICAL_CONTEXT]

    def test_agents_preamble_does_not_take_the_first_slot(self) -> None:
        """The user's real first request is pinned first, not Codex's AGENTS.md preamble."""
        messages = [
            user("# AGENTS.md instructions\n\nAlways run the linter.", "injected"),
            user("Port the CLI to click", "user"),
            *[user(f"follow-up {i}", "user") for i in range(300)],
        ]
        s = SummaryInput(
            messages=tuple(messages),
            seqs=tuple(range(1, len(messages) + 1)),
            previous=None,
            todos=(),
            budget_tokens=300,
        )
        out = check_output(ExtractiveSummarizer().summarize(s), s)
        assert split_entries(out[Section.PRIMARY_REQUEST])[0] == "- Port the CLI to click"
        assert "Always run the linter" not in out[Section.CRITICAL_CONTEXT]

    def test_absent_origin_is_typed(self) -> None:
        """A user message without origin (a native session) is a request."""
        out = summarize(span([user("Add a --json flag")]))
        assert out[Section.PRIMARY_REQUEST] == "- Add a --json flag"

    def test_check_adds_first_and_latest_a_summarizer_dropped(self) -> None:
        """Whatever wrote the narrative, the first and the latest request are there."""
        s = span([user("First: build the parser"), say("ok"), user("Latest: add tests")])
        out = check_output({"Primary Request and Intent": "- something vague"}, s)
        assert split_entries(out[Section.PRIMARY_REQUEST]) == [
            "- First: build the parser",
            "- something vague",
            "- Latest: add tests",
        ]

    def test_check_keeps_the_previous_first_request(self) -> None:
        """On re-compaction the first request is the previous Checkpoint's first entry."""
        previous = Checkpoint(primary_request="- The original goal\n- later ask")
        s = span([user("Newest ask")], previous=previous)
        out = check_output({"Primary Request and Intent": "- Newest ask"}, s)
        assert split_entries(out[Section.PRIMARY_REQUEST])[0] == "- The original goal"


class TestNextStep:
    def test_continues_current_work_when_the_statement_is_elsewhere(self) -> None:
        """A latest statement about something else: Next Step names the task in progress."""
        s = span([user("Export"), say("The suite is green.")], todos=IN_PROGRESS)
        step = summarize(s)[Section.NEXT_STEP]
        assert step.startswith(f"Continue the task in progress: {TASK}")
        assert "green" not in step  # a "done" claim is not carried while a task is open

    def test_keeps_a_statement_about_the_task(self) -> None:
        """The latest statement about the task in progress is the Next Step as written."""
        text = "Next I will add the CSV export writer and its test."
        out = summarize(span([user("Export"), say(text)], todos=IN_PROGRESS))
        assert out[Section.NEXT_STEP] == text

    def test_unrelated_plan_is_kept_after_the_task(self) -> None:
        """A plan that is not about the task follows it, so nothing the agent meant is lost."""
        s = span([user("Export"), say("Then I will tidy the imports.")], todos=IN_PROGRESS)
        step = summarize(s)[Section.NEXT_STEP]
        assert step.startswith(f"Continue the task in progress: {TASK}")
        assert step.endswith("Planned just before this Checkpoint: Then I will tidy the imports.")

    @pytest.mark.parametrize(
        "text",
        ["Which would you like to address first?", "Shall I go ahead?\n", "Done? **Ready?**"],
    )
    def test_never_a_question(self, text: str) -> None:
        """A question to the user never becomes the Next Step, with or without tasks."""
        with_task = summarize(span([user("Export"), say(text)], todos=IN_PROGRESS))
        assert with_task[Section.NEXT_STEP].startswith("Continue the task in progress")
        pending = (TodoItem(content="Write docs", status="pending"),)
        with_pending = summarize(span([user("Export"), say(text)], todos=pending))
        assert with_pending[Section.NEXT_STEP] == "Start the next pending task: Write docs"
        none = summarize(span([user("Export"), say(text)]))[Section.NEXT_STEP]
        assert "?" not in none
        assert none.startswith("Answer the user's latest request")

    @pytest.mark.parametrize(
        "text", ["Done: 5 steps completed. Ready for review.", "All tests pass.", "Finished."]
    )
    def test_never_done_while_tasks_are_unfinished(self, text: str) -> None:
        """'Done' with a pending task names the task instead; with no task it stays."""
        pending = (TodoItem(content="Write docs", status="pending"),)
        out = summarize(span([user("Export"), say(text)], todos=pending))
        assert out[Section.NEXT_STEP] == "Start the next pending task: Write docs"
        assert summarize(span([user("Export"), say(text)]))[Section.NEXT_STEP] == text


class TestCriticalContext:
    def test_constraints_only_from_typed_text(self) -> None:
        """A caveat's 'DO NOT respond' is no constraint; the user's 'never' is."""
        caveat = "<local-command-caveat>DO NOT respond to these messages.</local-command-caveat>"
        messages = [user(caveat, "injected"), user("Never push to main.")]
        out = summarize(span(messages))
        assert out[Section.CRITICAL_CONTEXT] == "- Never push to main."

    def test_questions_are_not_constraints(self) -> None:
        """'Should we always fill in 100%?' asks; it constrains nothing."""
        out = summarize(span([user("Should we always fill in 100%? You must keep the API.")]))
        assert out[Section.CRITICAL_CONTEXT] == "- You must keep the API."

    def test_plan_constraint_ends_with_plan_mode(self) -> None:
        """'Do not edit files yet' typed in Plan mode is gone once an agent turn follows."""
        messages = [user("Plan it. Do not edit files yet."), say("Plan."), user("Go ahead.")]
        ended = summarize(span(messages, modes=("plan", "plan", "agent"), mode="agent"))
        assert "Do not edit" not in ended[Section.CRITICAL_CONTEXT]
        still = summarize(span(messages[:2], modes=("plan", "plan"), mode="plan"))
        assert still[Section.CRITICAL_CONTEXT] == "- while in plan mode: Do not edit files yet."

    def test_mode_message_ends_it(self) -> None:
        """A mode message (switch_mode by message) ends the Plan-mode constraint too."""
        messages = [
            user("Plan it. Do not edit files yet."),
            user("<mode-switch>The mode is now Agent.</mode-switch>", "mode_switch"),
        ]
        out = summarize(span(messages, modes=("plan", "plan"), mode="plan"))
        assert "Do not edit" not in out[Section.CRITICAL_CONTEXT]

    def test_previous_mode_entry_dropped_after_the_mode(self) -> None:
        """A folded Checkpoint's Plan-mode constraint goes once the mode is agent."""
        previous = Checkpoint(
            critical_context="- while in plan mode: Do not edit files yet.\n- Keep the API."
        )
        out = summarize(span([user("Go ahead.")], previous=previous, mode="agent"))
        assert out[Section.CRITICAL_CONTEXT] == "- Keep the API."

    def test_check_drops_an_ended_constraint_a_summarizer_kept(self) -> None:
        """An LLM that repeats the ended constraint has that line dropped by code."""
        messages = [user("Plan it. Do not edit files yet."), user("Go ahead.")]
        s = span(messages, modes=("plan", "agent"), mode="agent")
        out = check_output({"Critical Context": "- Do not edit files yet.\n- Keep it small."}, s)
        assert out[Section.CRITICAL_CONTEXT] == "- Keep it small."


GO_BUILD_FAIL = (
    "# example.com/cli\n./cmd/clean.go:52:2: undefined: logging.Init\n"
    "./cmd/clean.go:60:9: too many arguments"
)


class TestErrorsAndFixes:
    def test_go_compiler_error_is_the_live_error(self) -> None:
        """A Go build failure is reported with its compiler line."""
        out = summarize(
            span([call("c1", "Bash", command="go build ./..."), result("c1", GO_BUILD_FAIL)])
        )
        assert out[Section.ERRORS_AND_FIXES] == (
            "- `go build ./...` failed: ./cmd/clean.go:52:2: undefined: logging.Init"
        )

    def test_test_failure_keeps_its_message_line(self) -> None:
        """A '--- FAIL' header brings the line under it, where the failure says why."""
        log = (
            "=== RUN   TestClean\n--- FAIL: TestClean (0.00s)\n"
            "    clean_test.go:12: want 2 got 3\nFAIL"
        )
        assert error_lines(log)[0] == "--- FAIL: TestClean (0.00s) clean_test.go:12: want 2 got 3"

    def test_marked_fixed_when_a_later_run_passes(self) -> None:
        """The same command passing later marks its failure fixed."""
        messages = [
            call("c1", "Bash", command="go test ./..."),
            result("c1", "--- FAIL: TestX (0.01s)\n    x_test.go:3: boom\nFAIL"),
            call("c2", "Bash", command="go test ./..."),
            result("c2", "ok  \texample.com/cli\t0.2s"),
        ]
        out = summarize(span(messages))[Section.ERRORS_AND_FIXES]
        assert out.endswith("(fixed: a later run passed)")
        assert "x_test.go:3: boom" in out

    def test_latest_failure_per_command_replaces_older(self) -> None:
        """Only the latest failure of a command is listed; an old fixed panic does not linger."""
        messages = [
            call("c1", "Bash", command="go test ./..."),
            result("c1", "panic: runtime error: index out of range"),
            call("c2", "Bash", command="go test ./..."),
            result("c2", GO_BUILD_FAIL),
        ]
        out = summarize(span(messages))[Section.ERRORS_AND_FIXES]
        assert "panic" not in out
        assert "undefined: logging.Init" in out
        previous = Checkpoint(errors_and_fixes="- `go test ./...` failed: panic: old")
        again = summarize(span(messages[2:], previous=previous))[Section.ERRORS_AND_FIXES]
        assert "panic" not in again

    @pytest.mark.parametrize(
        "line",
        [
            "+\t// Error is non-fatal: logs go to stderr",
            "    raise SchemaError('bad')",
            "@@ -1,3 +1,4 @@ fatal: x",
        ],
    )
    def test_source_and_diff_lines_are_not_errors(self, line: str) -> None:
        """Lines that only mention an error (code, diffs) are not failures."""
        assert error_lines(line) == []

    def test_check_adds_the_latest_failure_a_summarizer_dropped(self) -> None:
        """An LLM that wrote '(none)' still shows the live error."""
        s = span([call("c1", "Bash", command="go build ./..."), result("c1", GO_BUILD_FAIL)])
        out = check_output({"Errors and Fixes": ""}, s)
        assert "undefined: logging.Init" in out[Section.ERRORS_AND_FIXES]


class TestFilesAndCode:
    def test_edited_first_then_read_normalised_and_deduplicated(self) -> None:
        """Edits come first; absolute paths are made relative to the working directory."""
        root = "/home/u/proj"
        messages = [
            user("Look at cmd/app/main.go please"),
            call("c1", "Read", file_path=f"{root}/cmd/app/main.go"),
            result("c1", "package main"),
            call("c2", "Read", file_path=f"{root}/README.md"),
            result("c2", "# x"),
            call("c3", "Edit", file_path=f"{root}/cmd/app/main.go", old_string="a", new_string="b"),
            result("c3", "ok"),
            call("c4", "Grep", pattern="x", path=root),
            result("c4", ""),
            call("c5", "Bash", command="go test ./..."),
            result("c5", "ok"),
        ]
        out = summarize(span(messages))[Section.FILES_AND_CODE]
        assert split_entries(out) == ["- edited `cmd/app/main.go`", "- read `README.md`"]

    def test_apply_patch_files_are_edited(self) -> None:
        """Codex's apply_patch names the files it changes."""
        patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Add File: src/b.py\n"
        out = summarize(span([call("c1", "apply_patch", input=patch), result("c1", "Done")]))
        assert split_entries(out[Section.FILES_AND_CODE]) == [
            "- edited `src/a.py`",
            "- edited `src/b.py`",
        ]

    def test_working_directory_inference(self) -> None:
        """The root is the prefix an absolute path has before a relative one seen elsewhere."""
        assert working_directory(["/r/p/a/b.go", "/r/p/c.go"], ["a/b.go"]) == "/r/p"
        assert working_directory(["/r/p/a/b.go", "/r/p/a/c.go"], []) == "/r/p/a"
        assert working_directory(["/x.go"], []) == ""

    def test_check_adds_an_edited_file_a_summarizer_dropped(self) -> None:
        """Every file the span edited is named, whatever the summarizer wrote."""
        s = span([call("c1", "write_file", path="docs/guide.md", content="x"), result("c1", "ok")])
        out = check_output({"Files and Code": "- some notes"}, s)
        assert out[Section.FILES_AND_CODE] == "- some notes\n- edited `docs/guide.md`"


class TestKeyConcepts:
    def test_recurring_identifiers_not_tool_names(self) -> None:
        """Identifiers in two or more requests/statements/edits; tool names and one-offs never."""
        messages = [
            user("Rename `parse_config` and keep ConfigLoader stable."),
            say("I will rename parse_config in ConfigLoader."),
            call("c1", "Edit", file_path="a.py", old_string="parse_config", new_string="load_cfg"),
            result("c1", "ok"),
            say("Edit done with todo_write tracking; once_only_name appears once."),
        ]
        facts = read_span(messages)
        assert facts.terms[:2] == ["parse_config", "ConfigLoader"]
        out = summarize(span(messages))[Section.KEY_CONCEPTS]
        assert "`parse_config`" in out
        assert "`ConfigLoader`" in out
        assert "once_only_name" not in out
        assert "`Edit`" not in out


CLAUDE_SUMMARY = """This session is being continued from a previous conversation that ran out.

Analysis:
Chronological notes that are not a section.

Summary:
1. Primary Request and Intent:
   - Add line-level attribution to the manual-commit strategy
   - Store it as `initial_attribution` in metadata.json

2. Key Technical Concepts:
   - **Shadow branches**: `entire/<hash>` stores checkpoint state

3. Files and Code Sections:
   - **`cmd/entire/cli/checkpoint/checkpoint.go`**
     - Added `InitialAttribution`

4. Errors and fixes:
   - Lint failed on a shadowed variable; renamed it.

6. All user messages:
   - "can you analyze the codebase"
   - "ok, let's implement this"

7. Pending Tasks:
   - Run tests and lint

8. Current Work:
   Creating the test file.

9. Optional Next Step:
   Run `mise run test`.
"""


class TestRecordedSummaries:
    def test_claude_code_sections_go_under_ours(self) -> None:
        """Each of Claude Code's numbered sections lands under the matching section."""
        out = read_recorded(CLAUDE_SUMMARY, "claude-code")
        primary = out[Section.PRIMARY_REQUEST]
        assert primary[0].startswith("- Earlier summary (claude-code):\n  > - Add line-level")
        assert primary[-1] == '- "ok, let\'s implement this"'
        assert "- Run tests and lint" in primary
        assert out[Section.KEY_CONCEPTS] == [
            "- **Shadow branches**: `entire/<hash>` stores checkpoint state"
        ]
        assert out[Section.FILES_AND_CODE] == [
            "- `cmd/entire/cli/checkpoint/checkpoint.go` (named in an earlier summary)"
        ]
        assert out[Section.ERRORS_AND_FIXES] == [
            "- Lint failed on a shadowed variable; renamed it."
        ]
        assert out[Section.NEXT_STEP] == ["Creating the test file.", "Run `mise run test`."]
        assert "Chronological notes" not in json.dumps(out)

    def test_unsectioned_summary_is_quoted(self) -> None:
        """A summary without sections (Codex) is quoted whole, clipped, as a prior summary."""
        out = read_recorded("We migrated the DB.\nNext: wire the API.", "codex")
        assert out[Section.PRIMARY_REQUEST] == [
            "- Earlier summary (codex):\n  > We migrated the DB. Next: wire the API."
        ]

    def test_next_checkpoint_folds_a_recorded_one(self, tmp_path: Path) -> None:
        """After Claude Code's own compaction, our next Checkpoint keeps its goal (not none)."""
        with Session(tmp_path / "log.jsonl") as session:
            session.append(TurnStartData())
            session.append(user("can you analyze the codebase"))
            session.append(
                CheckpointData(
                    text=CLAUDE_SUMMARY,
                    first_seq=1,
                    last_seq=2,
                    tokens_before=100,
                    tokens_after=50,
                    summarizer="claude-code",
                )
            )
            session.append(say("Running the tests now. " * 30))
            r = compact(session, CompactionPolicy(window_tokens=40_000), force=True)
        primary = r.checkpoint.primary_request
        assert primary.startswith("- Earlier summary (claude-code):")
        assert "Add line-level attribution" in primary
        assert "`cmd/entire/cli/checkpoint/checkpoint.go`" in r.checkpoint.files_and_code

    def test_recorded_summary_message_in_the_span(self) -> None:
        """A summary kept as a message (origin recorded_summary) is folded, not a request."""
        messages = [user(CLAUDE_SUMMARY, "recorded_summary"), user("Now run the tests")]
        primary = summarize(span(messages))[Section.PRIMARY_REQUEST]
        entries = split_entries(primary)
        assert entries[0].startswith("- Earlier summary (recorded):")
        assert entries[-1] == "- Now run the tests"
        assert "This session is being continued" not in primary


def test_terms_do_not_depend_on_the_hash_seed() -> None:
    """Same input, same bytes: the order of terms is the same under any PYTHONHASHSEED."""
    import os
    import subprocess
    import sys

    code = (
        "from compaction import Message\n"
        "from compaction.summarizers.facts import read_span\n"
        "ms = [Message(role='user', content='fix alpha_one beta_two gamma_three delta_four'),\n"
        "      Message(role='assistant', content='delta_four gamma_three beta_two alpha_one')]\n"
        "print(read_span(ms).terms)\n"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert outs == {"['alpha_one', 'beta_two', 'gamma_three', 'delta_four']\n"}


class TestQuietReads:
    LOG = "2024 ERROR: connection refused\nFAILED test_x - AssertionError: 1 != 2\n"

    @staticmethod
    def status(call_id: str, text: str, *, failed: bool | None, code: int | None) -> Message:
        return Message(
            role="tool", tool_call_id=call_id, content=text, failed=failed, exit_code=code
        )

    @pytest.mark.parametrize(
        ("name", "args", "failed", "code", "listed"),
        [
            ("Read", {"file_path": "app.log"}, False, None, False),
            ("Grep", {"pattern": "ERROR"}, False, None, False),
            ("bash", {"command": "cat app.log"}, False, 0, False),
            ("bash", {"command": "grep -n ERROR app.log"}, None, 0, False),
            ("bash", {"command": "pytest -q | tail -5"}, False, 0, True),
            ("bash", {"command": "make test && cat out.log"}, False, 0, True),
            ("bash", {"command": "cat app.log"}, True, 1, True),
            ("Read", {"file_path": "app.log"}, None, None, True),
            ("bash", {"command": "pytest -q"}, False, 0, True),
        ],
        ids=[
            "read",
            "grep-tool",
            "cat",
            "grep",
            "pipeline",
            "list",
            "failed-cat",
            "no-status",
            "not-a-read",
        ],
    )
    def test_errors_and_fixes_skips_reads_and_searches_that_passed(
        self,
        name: str,
        args: dict[str, object],
        failed: bool | None,
        code: int | None,
        listed: bool,
    ) -> None:
        """A read or search whose recorded status is success quotes files: no error lines."""
        facts = read_span(
            [call("c1", name, **args), self.status("c1", self.LOG, failed=failed, code=code)]
        )
        assert bool(facts.runs) is listed

    def test_a_read_that_passes_after_a_failure_fixes_it(self) -> None:
        """A failed read, then the same read passing: the failure is marked fixed."""
        messages = [
            call("c1", "bash", command="cat app.log"),
            self.status(
                "c1", "cat: app.log: No such file or directory\nError: x", failed=True, code=1
            ),
            call("c2", "bash", command="cat app.log"),
            self.status("c2", self.LOG, failed=False, code=0),
        ]
        [run] = read_span(messages).runs.values()
        assert run.fixed
