"""The hooks: settings merged and removed exactly, a hook run that never fails the agent, audit."""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from compaction import ConfigError
from harness.hooks import (
    agent,
    apply,
    audit,
    audit_json,
    install,
    installed,
    receipts,
    run,
    uninstall,
)
from harness.hooks._settings import MARK, hook_command

CLAUDE = agent("claude-code")
HARNESS = ["/opt/venv/bin/harness"]
USER_HOOK = {"matcher": "", "hooks": [{"type": "command", "command": "echo mine"}]}


def _todo_record(todos: list[tuple[str, str]], call: str) -> list[str]:
    use = {
        "type": "assistant",
        "sessionId": "s",
        "message": {
            "id": f"m{call}",
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": call,
                    "name": "TodoWrite",
                    "input": {"todos": [{"content": c, "status": s} for c, s in todos]},
                }
            ],
        },
    }
    result = {
        "type": "user",
        "sessionId": "s",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call, "content": "ok"}],
        },
    }
    return [json.dumps(use), json.dumps(result)]


def _compaction(summary: str) -> list[str]:
    boundary = {"type": "system", "subtype": "compact_boundary", "sessionId": "s"}
    text = {
        "type": "user",
        "sessionId": "s",
        "isCompactSummary": True,
        "message": {"role": "user", "content": summary},
    }
    return [json.dumps(boundary), json.dumps(text)]


def _transcript(path: Path, summary: str = "Summary: nothing open.") -> Path:
    first = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "Plan it"}}
    lines = [json.dumps(first)]
    lines += _todo_record(
        [("A done", "completed"), ("B now", "in_progress"), ("C next", "pending")], "t1"
    )
    lines += _compaction(summary)
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(stdin: Mapping[str, object] | bytes, name: str = "claude-code") -> tuple[int, str, str]:
    raw = stdin if isinstance(stdin, bytes) else json.dumps(dict(stdin)).encode()
    out, err = io.StringIO(), io.StringIO()
    status = run(name, io.BytesIO(raw), out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def hooks_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep receipts and caches in the test's folder."""
    monkeypatch.setenv("HARNESS_HOOKS_DIR", str(tmp_path / "hooks"))
    return tmp_path / "hooks"


class TestSettings:
    def test_install_keeps_other_hooks_and_is_idempotent(self, tmp_path: Path) -> None:
        """Install adds two entries beside the user's; a second install changes nothing."""
        path = tmp_path / "settings.json"
        path.write_text(json.dumps({"model": "x", "hooks": {"PreCompact": [USER_HOOK]}}))
        first = install(CLAUDE, path, HARNESS)
        apply(first)
        again = install(CLAUDE, path, HARNESS)
        settings = json.loads(path.read_text())
        assert first.added == ["PreCompact", "SessionStart"]
        assert not again.changed
        assert again.kept == ["PreCompact", "SessionStart"]
        assert settings["model"] == "x"
        assert settings["hooks"]["PreCompact"][0] == USER_HOOK
        assert settings["hooks"]["SessionStart"][0]["matcher"] == "compact"
        assert len(installed(CLAUDE, path)) == 2

    def test_uninstall_removes_exactly_what_install_added(self, tmp_path: Path) -> None:
        """Uninstall leaves the file as it was before install."""
        path = tmp_path / "settings.json"
        before = {"model": "x", "hooks": {"PreCompact": [USER_HOOK]}}
        path.write_text(json.dumps(before))
        apply(install(CLAUDE, path, HARNESS))
        change = uninstall(CLAUDE, path)
        apply(change)
        assert json.loads(path.read_text()) == before
        assert change.removed == ["PreCompact", "SessionStart"]

    def test_uninstall_removes_a_file_it_created(self, tmp_path: Path) -> None:
        """A settings file the install created is gone after uninstall."""
        path = tmp_path / "new" / "settings.json"
        apply(install(CLAUDE, path, HARNESS))
        apply(uninstall(CLAUDE, path))
        assert not path.exists()

    def test_moved_harness_updates_the_command(self, tmp_path: Path) -> None:
        """Installing from another harness rewrites the command instead of adding a second."""
        path = tmp_path / "settings.json"
        apply(install(CLAUDE, path, HARNESS))
        change = install(CLAUDE, path, ["/elsewhere/harness"])
        assert change.updated == ["PreCompact", "SessionStart"]

    @pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"hooks": []}'])
    def test_bad_settings_are_one_line(self, tmp_path: Path, text: str) -> None:
        """A settings file that is not a JSON object with a hooks object is refused, named."""
        path = tmp_path / "settings.json"
        path.write_text(text)
        with pytest.raises(ConfigError, match=r"settings\.json"):
            install(CLAUDE, path, HARNESS)

    def test_command_names_the_harness_and_checks_it_exists(self) -> None:
        """The command runs the harness by absolute path only when it is still there."""
        command = hook_command(CLAUDE, HARNESS)
        assert command.startswith("if [ -x /opt/venv/bin/harness ]; then")
        assert command.endswith(f"{MARK} claude-code")

    def test_uninstalled_harness_exits_zero_silently(self, tmp_path: Path) -> None:
        """A hook whose harness is gone does nothing and exits 0 in the agent's shell."""
        command = hook_command(CLAUDE, [str(tmp_path / "gone" / "harness")])
        done = subprocess.run(
            ["sh", "-c", command], input="{}", capture_output=True, text=True, check=False
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


class TestRun:
    def test_after_compaction_restores_every_open_item(self, tmp_path: Path) -> None:
        """SessionStart(compact) prints every open item verbatim, headed with the audit line."""
        path = _transcript(tmp_path / "t.jsonl", "Summary: B now is under way.")
        data = {"hook_event_name": "SessionStart", "source": "compact", "session_id": "s1"}
        status, out, err = _run(data | {"transcript_path": str(path)})
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert (status, err) == (0, "")
        assert "the summary kept 1 of 2 open items" in context
        assert "- [in_progress] B now" in context
        assert "- [pending] C next" in context
        assert "A done" not in context
        (receipt,) = receipts()
        assert receipt["kept"] == 1
        assert receipt["dropped"] == ["- [pending] C next"]

    def test_before_compaction_passes_instructions(self, tmp_path: Path) -> None:
        """PreCompact prints the open items as plain text for Claude Code's summary prompt."""
        path = _transcript(tmp_path / "t.jsonl")
        status, out, _ = _run({"hook_event_name": "PreCompact", "transcript_path": str(path)})
        assert status == 0
        assert "- [in_progress] B now" in out
        assert "- [pending] C next" in out
        assert not out.lstrip().startswith("{")

    def test_other_sources_print_nothing(self, tmp_path: Path) -> None:
        """A SessionStart that is not after a compaction does nothing."""
        path = _transcript(tmp_path / "t.jsonl")
        data = {
            "hook_event_name": "SessionStart",
            "source": "startup",
            "transcript_path": str(path),
        }
        assert _run(data) == (0, "", "")

    @pytest.mark.parametrize(
        "stdin",
        [
            b"{not json",
            {"hook_event_name": "PreCompact", "transcript_path": "/no/such/file.jsonl"},
            {"hook_event_name": "PreCompact"},
        ],
        ids=["damaged input", "missing transcript", "no transcript"],
    )
    def test_failure_is_one_line_and_exit_zero(self, stdin: Mapping[str, object] | bytes) -> None:
        """Any failure is one stderr line, no traceback, exit 0."""
        status, out, err = _run(stdin)
        assert (status, out) == (0, "")
        assert err.count("\n") == 1
        assert err.startswith("context-harness hook:")
        assert "Traceback" not in err

    def test_damaged_transcript_still_restores(self, tmp_path: Path) -> None:
        """Broken lines in the transcript are skipped; the items around them still come back."""
        path = _transcript(tmp_path / "t.jsonl")
        lines = path.read_text().splitlines()
        lines.insert(2, '{"type": "assistant", "message": {"content": [TodoWrite broken')
        path.write_text("\n".join(lines) + "\n\x00\x01garbage")
        data = {"hook_event_name": "SessionStart", "source": "compact"}
        status, out, err = _run(data | {"transcript_path": str(path)})
        assert (status, err) == (0, "")
        assert "- [pending] C next" in out

    def test_large_transcript_is_read_once_then_incrementally(self, tmp_path: Path) -> None:
        """A 50 MB transcript is read whole once; the next run reads only what was appended."""
        path = _transcript(tmp_path / "t.jsonl")
        filler = json.dumps({"type": "progress", "sessionId": "s", "data": "x" * 1000}) + "\n"
        with path.open("a") as fh:
            fh.write(filler * (50 * 1024))
        data = {"hook_event_name": "PreCompact", "transcript_path": str(path)}
        _run(data)
        with path.open("a") as fh:
            fh.write(filler)
        status, out, err = _run(data)
        first, second = [r["bytes_read"] for r in receipts()]
        assert (status, err) == (0, "")
        assert first > 50 * 1024 * 1000
        assert second == len(filler)
        assert "- [pending] C next" in out

    def test_secret_never_printed(self, tmp_path: Path) -> None:
        """A failure naming a key-shaped value prints it redacted."""
        status, _, err = _run(
            {"hook_event_name": "PreCompact", "transcript_path": 5}, "claude-code"
        )
        assert status == 0
        status, _, err = _run(b'{"x": "sk-abcdefghijklmnop"', "claude-code")
        assert "sk-abcdefghijklmnop" not in err

    def test_gemini_request_without_snapshot_is_not_read(self) -> None:
        """Gemini's BeforeModel input without a compression is left alone, unparsed."""
        assert _run(b"not even json", "gemini") == (0, "", "")


class TestAudit:
    def test_audit_counts_kept_items(self, tmp_path: Path) -> None:
        """The audit reports each compaction's open items and which the summary kept."""
        path = _transcript(tmp_path / "t.jsonl", "Summary: C next remains.")
        data = audit_json(path, audit(path))
        (compaction,) = data["compactions"]
        assert (compaction["open"], compaction["kept"]) == (2, 1)
        assert [e["kept"] for e in compaction["items"]] == [False, True]


class TestCarried:
    def test_plan_and_running_jobs_are_restored(self) -> None:
        """An approved plan and the jobs still running (issue 41's events) join the block."""
        from types import SimpleNamespace
        from typing import Any, cast

        from harness.hooks._fold import fold
        from harness.hooks._restore import restore_block

        def event(wire: str, **data: object) -> Any:
            return SimpleNamespace(type=wire, data=SimpleNamespace(**data))

        events = [
            event("plan/approve", text="1. parse\n2. test"),
            event("job/start", id="b1", kind="command", runs="pytest -x", owner=None),
            event("job/start", id="a2", kind="agent", runs="review the parser", owner="main"),
            event("job/end", id="b1"),
        ]
        block = restore_block(fold(cast(Any, events)).open_items(), None)
        assert "The approved plan:\n- [approved] 1. parse\n2. test" in block
        assert "- job a2 [running agent] review the parser (owner: main)" in block
        assert "pytest -x" not in block


def test_run_in_another_thread(tmp_path: Path) -> None:
    """A hook run from a thread other than the main one works (no alarm is set there)."""
    import threading

    path = _transcript(tmp_path / "t.jsonl")
    results: list[tuple[int, str, str]] = []
    data = {"hook_event_name": "PreCompact", "transcript_path": str(path)}
    worker = threading.Thread(target=lambda: results.append(_run(data)))
    worker.start()
    worker.join(timeout=60)
    ((status, out, err),) = results
    assert (status, err) == (0, "")
    assert "- [pending] C next" in out


class TestAuditText:
    def test_a_long_item_shows_its_first_line_and_the_count(self) -> None:
        """A many-line item (an approved plan) is one line in the text, its rest counted."""
        from harness.hooks._audit import audit_text

        data = {
            "transcript": "t.jsonl",
            "compactions": [
                {
                    "number": 1,
                    "kept": 1,
                    "open": 2,
                    "items": [
                        {"item": "- [pending] Run the tests", "kept": True, "how": "verbatim"},
                        {"item": "- [approved] # Plan\n1. one\n2. two", "kept": False, "how": ""},
                    ],
                }
            ],
            "kept_items": 1,
            "open_items": 2,
        }
        assert audit_text(data).splitlines() == [
            "t.jsonl: 1 compactions by the agent",
            "compaction 1: the summary kept 1 of 2 open items",
            "  kept (verbatim) - [pending] Run the tests",
            "  DROPPED         - [approved] # Plan (+2 more lines; --json has them whole)",
            "total: kept 1 of 2 open items",
        ]
