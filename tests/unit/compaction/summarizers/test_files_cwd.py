"""Files and Code shows paths relative to the working directory the transcript recorded.

Shapes from the shared Claude Code sessions (records carry ``cwd``, edits name absolute paths
such as ``/Users/soph/Work/entire/devenv/cli/cmd/entire/cli/types.go``) and Codex rollouts
(``session_meta.cwd``, ``turn_context.cwd``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction import (
    CompactionPolicy,
    FunctionCall,
    Message,
    Session,
    ToolCall,
    TurnStartData,
    TurnStarted,
    compact,
    parse_event,
)
from compaction.importers import load
from compaction.summarizers._paths import home_of, normalise

CWD = "/Users/soph/Work/entire/devenv/cli"


def edit(call_id: str, path: str) -> Message:
    fn = FunctionCall(name="Edit", arguments=json.dumps({"file_path": path, "old_string": "a"}))
    return Message(role="assistant", tool_calls=(ToolCall(id=call_id, function=fn),))


def files_section(tmp_path: Path, cwd: str | None, paths: list[str], said: str = "") -> str:
    with Session(tmp_path / "s.jsonl") as session:
        session.append(TurnStartData(cwd=cwd))
        session.append(Message(role="user", content="Tidy the docs " + said, origin="user"))
        for n, path in enumerate(paths):
            session.append(edit(f"c{n}", path))
            session.append(Message(role="tool", tool_call_id=f"c{n}", content="ok"))
        policy = CompactionPolicy(window_tokens=16_000, retain=0.0)
        return compact(session, policy, force=True).checkpoint.files_and_code


class TestNormalise:
    @pytest.mark.parametrize(
        ("path", "shown"),
        [
            (f"{CWD}/cmd/entire/cli/types.go", "cmd/entire/cli/types.go"),
            (f"{CWD}/README.md", "README.md"),
            (f"{CWD}-old/README.md", "~/Work/entire/devenv/cli-old/README.md"),
            ("/Users/soph/.claude/plans/plan.md", "~/.claude/plans/plan.md"),
            ("/etc/hosts", "/etc/hosts"),
            ("./docs/a.md", "docs/a.md"),
            ("docs/../docs/a.md", "docs/a.md"),
        ],
    )
    def test_relative_exactly_under_cwd_else_absolute_or_home(self, path: str, shown: str) -> None:
        """Under the cwd (component-wise): relative; else absolute, the home written ``~``."""
        assert normalise(path, CWD, home_of(CWD)) == shown

    def test_home_of(self) -> None:
        """Homes are /Users/x, /home/x and /root."""
        assert [home_of(p) for p in (CWD, "/home/ann/x", "/root", "/opt/x")] == [
            "/Users/soph",
            "/home/ann",
            "/root",
            "",
        ]


class TestFilesAndCode:
    def test_paths_relative_to_the_recorded_cwd(self, tmp_path: Path) -> None:
        """A recorded cwd wins over a guess from a shorter relative mention."""
        paths = [f"{CWD}/cmd/entire/cli/types.go"]
        text = files_section(tmp_path, CWD, paths, said="see cli/types.go")
        assert text == "- edited `cmd/entire/cli/types.go`"

    def test_root_readme_is_kept_beside_another_readme(self, tmp_path: Path) -> None:
        """Matched exactly: ``README.md`` does not vanish because ``docs/README.md`` is listed."""
        paths = [f"{CWD}/README.md", f"{CWD}/docs/README.md"]
        text = files_section(tmp_path, CWD, paths)
        assert text.split("\n") == ["- edited `README.md`", "- edited `docs/README.md`"]

    def test_outside_the_cwd_absolute_and_home_as_tilde(self, tmp_path: Path) -> None:
        """A file outside the cwd keeps its absolute path; one in the home is shown with ~."""
        paths = ["/Users/soph/.claude/plans/p.md", "/tmp/scratch.txt", f"{CWD}/go.mod"]
        text = files_section(tmp_path, CWD, paths)
        assert text.split("\n") == [
            "- edited `~/.claude/plans/p.md`",
            "- edited `/tmp/scratch.txt`",
            "- edited `go.mod`",
        ]


class TestImportersCarryCwd:
    def test_old_turn_start_without_cwd_is_valid(self) -> None:
        """A log line written before the field still parses (cwd None)."""
        line = '{"v":1,"seq":1,"type":"turn/start","data":{}}'
        event = parse_event(line)
        assert isinstance(event, TurnStarted)
        assert event.data.cwd is None

    def test_claude_code_record_cwd_reaches_turn_start(self, tmp_path: Path) -> None:
        """Claude Code's per-record ``cwd`` is the turn's working directory."""
        record = {
            "type": "user",
            "uuid": "u1",
            "cwd": CWD,
            "message": {"role": "user", "content": "Fix types.go"},
        }
        path = tmp_path / "s.jsonl"
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        starts = [e.data.cwd for e in load(path) if isinstance(e, TurnStarted)]
        assert starts == [CWD]

    def test_codex_session_meta_and_turn_context_cwd(self, tmp_path: Path) -> None:
        """Codex: ``session_meta.cwd``, then the latest ``turn_context.cwd``."""

        def user(text: str) -> dict[str, object]:
            content = [{"type": "input_text", "text": text}]
            return {
                "type": "response_item",
                "payload": {"type": "message", "role": "user", "content": content},
            }

        records = [
            {"type": "session_meta", "payload": {"id": "s", "cwd": "/repo"}},
            user("first"),
            {"type": "turn_context", "payload": {"cwd": "/repo/sub", "model": "gpt-5"}},
            user("second"),
        ]
        path = tmp_path / "rollout.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        starts = [e.data.cwd for e in load(path) if isinstance(e, TurnStarted)]
        assert starts == ["/repo", "/repo/sub"]

    def test_real_session_files_are_relative_to_its_cwd(
        self, transcripts: Path, tmp_path: Path
    ) -> None:
        """The shared session: every edited file under its cwd is shown relative, exactly."""
        name = "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"
        events = list(load(transcripts / name))
        cwds = {e.data.cwd for e in events if isinstance(e, TurnStarted)}
        assert cwds == {CWD}
        edited = set()
        with Session(tmp_path / "s.jsonl") as session:
            for event in events[:200]:
                session.append(event.data)
                data = event.data
                for call in data.tool_calls or () if isinstance(data, Message) else ():
                    args = json.loads(call.function.arguments)
                    if call.function.name in ("Edit", "Write") and "file_path" in args:
                        edited.add(args["file_path"])
            policy = CompactionPolicy(window_tokens=64_000, retain=0.0)
            files = compact(session, policy, force=True).checkpoint.files_and_code
        assert edited
        for path in edited:
            shown = path.removeprefix(CWD + "/") if path.startswith(CWD + "/") else path
            assert f"- edited `{shown}`" in files.split("\n"), path
