"""`harness hooks`: install, status, uninstall, log and audit from the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import run_cli


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A HOME, CODEX_HOME and hooks folder of the test's own."""
    return {
        "HOME": str(tmp_path / "home"),
        "CODEX_HOME": str(tmp_path / "codexhome"),
        "HARNESS_HOOKS_DIR": str(tmp_path / "hooks"),
    }


class TestInstall:
    def test_install_status_uninstall(self, tmp_path: Path, env: dict[str, str]) -> None:
        """Install prints what changed, status shows it, uninstall removes it."""
        project = tmp_path / "proj"
        done = run_cli("hooks", "install", "claude-code", "--project", project, env=env)
        assert done.returncode == 0
        assert "added hook PreCompact" in done.stdout
        assert "added hook SessionStart" in done.stdout
        assert "hooks run claude-code" in done.stdout
        status = run_cli("hooks", "status", "--project", project, env=env).stdout
        assert "claude-code  project" in status
        assert "2 hooks" in status
        removed = run_cli("hooks", "uninstall", "claude-code", "--project", project, env=env)
        assert "removed hook PreCompact" in removed.stdout
        assert not (project / ".claude" / "settings.json").exists()

    def test_dry_run_writes_nothing(self, tmp_path: Path, env: dict[str, str]) -> None:
        """--dry-run says what would change and leaves the file alone."""
        project = tmp_path / "proj"
        done = run_cli("hooks", "install", "gemini", "--project", project, "--dry-run", env=env)
        assert "would change" in done.stdout
        assert not (project / ".gemini").exists()

    def test_codex_goes_to_codex_home(self, tmp_path: Path, env: dict[str, str]) -> None:
        """Codex's hooks go to $CODEX_HOME/hooks.json; a project folder is refused in one line."""
        done = run_cli("hooks", "install", "codex", env=env)
        hooks = json.loads((tmp_path / "codexhome" / "hooks.json").read_text())
        assert done.returncode == 0
        assert hooks["hooks"]["SessionStart"][0]["matcher"] == "compact"
        refused = run_cli("hooks", "install", "codex", "--project", tmp_path, env=env)
        assert refused.returncode == 2
        assert refused.stderr.count("\n") == 1
        assert "--user" in refused.stderr

    def test_bad_settings_one_line(self, tmp_path: Path, env: dict[str, str]) -> None:
        """A settings file that is not JSON gets one line naming it, exit 2."""
        settings = tmp_path / "proj" / ".claude" / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.write_text("{oops")
        done = run_cli("hooks", "install", "claude-code", "--project", tmp_path / "proj", env=env)
        assert done.returncode == 2
        assert str(settings) in done.stderr
        assert "Traceback" not in done.stderr


class TestRunGate:
    def test_gemini_request_without_compression_loads_nothing(self) -> None:
        """Gemini's BeforeModel without a compression is answered before compaction loads."""
        code = (
            "import io, sys\n"
            "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{\"llm_request\": {}}'))\n"
            "from harness.cli import main\n"
            "status = main(['hooks', 'run', 'gemini'])\n"
            "print(status, 'pydantic' in sys.modules, 'compaction.events' in sys.modules)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
        )
        assert done.stdout.split() == ["0", "False", "False"]


class TestAudit:
    def test_audit_shared_transcript(self, transcripts: Path) -> None:
        """The audit of a real Claude Code session lists each of its compactions."""
        path = transcripts / "claude-code_entire-cli_cd95adddad32_3compactions.jsonl"
        text = run_cli("hooks", "audit", path).stdout
        data = json.loads(run_cli("hooks", "audit", path, "--json").stdout)
        # The approved ExitPlanMode plan is open at every cut (issue 41's importer records it),
        # and Claude Code's own summaries never keep it.
        assert "compaction 1: the summary kept 2 of 3 open items" in text
        assert [c["open"] for c in data["compactions"]] == [3, 1, 1]
        assert data["kept_items"] == 2
