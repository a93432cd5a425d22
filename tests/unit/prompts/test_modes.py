"""Modes are data: the built-in three, and user modes from TOML/JSON plus a template folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction import ConfigError
from prompts import (
    BUILTIN_MODES,
    DEFAULT_MODE,
    Mode,
    PromptBuilder,
    available_modes,
    get_mode,
    load_modes,
)


class TestBuiltinModes:
    def test_the_built_in_modes(self) -> None:
        """Agent (default, one in progress), parallel (several), plan (todo_write forbidden)."""
        assert list(BUILTIN_MODES) == ["agent", "parallel", "plan", "team"]
        assert DEFAULT_MODE == "agent"
        agent, parallel, plan = (BUILTIN_MODES[n] for n in ("agent", "parallel", "plan"))
        assert agent.todo_write_allowed
        assert not agent.todo.allow_parallel_in_progress
        assert parallel.todo_write_allowed
        assert parallel.todo.allow_parallel_in_progress
        assert not plan.todo_write_allowed
        assert not plan.todo.allow_parallel_in_progress
        assert plan.tasks.forbidden
        assert not plan.tasks.enabled

    def test_team_mode_offers_the_task_tools(self) -> None:
        """Team mode: task tools enabled and allowed, todo_write allowed, one in progress."""
        team = BUILTIN_MODES["team"]
        assert team.tasks.enabled
        assert not team.tasks.forbidden
        assert team.todo_write_allowed
        assert not team.todo.allow_parallel_in_progress
        for name in ("agent", "parallel"):
            assert not BUILTIN_MODES[name].tasks.enabled

    def test_modes_are_frozen_data(self) -> None:
        """A mode round-trips through JSON and cannot be changed in place."""
        plan = BUILTIN_MODES["plan"]
        assert Mode.model_validate_json(plan.model_dump_json()) == plan
        with pytest.raises(ValueError, match="frozen"):
            # Assigning to a frozen model on purpose: the refusal is under test.
            plan.name = "other"  # type: ignore[misc]

    def test_get_mode_names_the_choices(self) -> None:
        """An unknown mode name is a ConfigError listing the modes."""
        with pytest.raises(ConfigError, match="choose one of agent, parallel, plan, team"):
            get_mode("review")


def _write_review(folder: Path, *, fmt: str = "toml") -> Path:
    (folder / "templates").mkdir()
    (folder / "templates" / "review.md.j2").write_text(
        "# Mode: {{ mode.title }}\n\nReview only. Tools: {{ tool_names | join(', ') }}.\n"
    )
    if fmt == "toml":
        path = folder / "modes.toml"
        path.write_text(
            '[[modes]]\nname = "review"\ntitle = "Review"\ntemplate_dir = "templates"\n'
            'blocks = ["review.md.j2", "modes/plan.md.j2"]\n'
            'todo = { forbidden = true }\ntools = { forbidden = ["write_file"] }\n'
        )
    else:
        path = folder / "modes.json"
        mode = {
            "name": "review",
            "title": "Review",
            "template_dir": "templates",
            "blocks": ["review.md.j2"],
            "todo": {"allow_parallel_in_progress": True},
        }
        path.write_text(json.dumps({"modes": [mode]}))
    return path


class TestUserModes:
    def test_toml_mode_with_own_and_builtin_templates(self, tmp_path: Path) -> None:
        """A TOML mode renders its own block, then a built-in one it names."""
        modes = load_modes(_write_review(tmp_path))
        review = modes["review"]
        assert review.template_dir == tmp_path / "templates"
        block = PromptBuilder().mode_block(review)
        assert block.startswith("# Mode: Review\n\nReview only. Tools: todo_write.")
        assert "Do not call `todo_write`" in block

    def test_json_mode(self, tmp_path: Path) -> None:
        """The same mode can come from JSON; available_modes adds it to the built-in ones."""
        modes = available_modes(_write_review(tmp_path, fmt="json"))
        assert list(modes) == ["agent", "parallel", "plan", "team", "review"]
        assert modes["review"].todo.allow_parallel_in_progress

    def test_user_templates_are_sandboxed(self, tmp_path: Path) -> None:
        """A user template cannot reach Python internals: the sandbox stops it."""
        path = _write_review(tmp_path)
        (tmp_path / "templates" / "review.md.j2").write_text(
            "{{ mode.__class__.__mro__[1].__subclasses__() }}\n"
        )
        with pytest.raises(ConfigError, match=r"sandbox|undefined"):
            PromptBuilder().mode_block(load_modes(path)["review"])

    def test_user_templates_are_strict(self, tmp_path: Path) -> None:
        """An undefined variable in a user template is an error naming the template."""
        path = _write_review(tmp_path)
        (tmp_path / "templates" / "review.md.j2").write_text("{{ nonsense }}\n")
        with pytest.raises(ConfigError, match=r"review\.md\.j2:1: 'nonsense' is undefined"):
            PromptBuilder().mode_block(load_modes(path)["review"])

    @pytest.mark.parametrize(
        ("text", "match"),
        [
            ("modes = 3", 'expected a list "modes"'),
            ("[[modes]]\nname = 'plan'\ntitle = 'P'", 'mode "plan" already exists'),
            ("[[modes]]\nname = 'Bad Name'\ntitle = 'B'", r"modes\[0\]: name: String should match"),
            ("[[modes]]\nname = 'x'", r"modes\[0\]: title: Field required"),
            ("[[modes]]\nname = 'x'\ntitle = 'X'\ncolor = 1", "color: Extra inputs"),
            ("[[modes]]\nname = 'x'\ntitle = 'X'\ntools = { strategy = 'hidden' }", "strategy"),
            ("not toml [", "not valid TOML"),
        ],
    )
    def test_bad_mode_files(self, tmp_path: Path, text: str, match: str) -> None:
        """A bad mode file is a ConfigError naming the file and the problem."""
        path = tmp_path / "modes.toml"
        path.write_text(text)
        with pytest.raises(ConfigError, match=match):
            load_modes(path)

    def test_missing_file(self, tmp_path: Path) -> None:
        """A missing mode file names the path."""
        with pytest.raises(ConfigError, match=r"cannot read modes file .*nope\.toml"):
            load_modes(tmp_path / "nope.toml")
