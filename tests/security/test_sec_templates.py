"""Section 1: templates are untrusted. Every escape and bomb, through every command that renders."""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from pathlib import Path

import pytest

from compaction import ConfigError
from harness.cli import main
from prompts import load_modes
from prompts.rendering import render

MARKER = "s3cr3t-marker-7f1e"

ATTACKS: dict[str, tuple[str, str]] = {
    # name: (template text, what the one-line error says)
    "path-read": (
        "{{ mode.template_dir.joinpath('SECRET').read_text() }}",
        "has no attribute 'template_dir'",
    ),
    "path-write": (
        "{{ mode.template_dir.joinpath('PWNED').write_text('x') }}",
        "has no attribute 'template_dir'",
    ),
    "dunder": ("{{ mode.title.__class__.__mro__ }}", "blocked by the template sandbox"),
    "globals": ("{{ self._TemplateReference__context }}", "blocked by the template sandbox"),
    "mutate": ("{{ mode.blocks.append(1) }}", "blocked by the template sandbox"),
    "string-bomb": ('{{ "a" * 4000000000 }}', "above the limit of 1000000"),
    "list-bomb": ("{{ [1] * 4000000000 }}", "above the limit of 1000000"),
    "power-bomb": ("{{ 9 ** 99999999 }}", "integer above 4096 bits"),
    "format-bomb": ('{{ "%0999999999d" % 1 }}', "above the limit of 1000000"),
    "format-method-bomb": ('{{ "{:>999999999}".format(1) }}', "above the limit of 1000000"),
    "filter-bomb": ('{{ "a" | center(999999999) }}', "above the limit of 1000000"),
    "replace-bomb": ('{{ ("a" * 900000) | replace("", "bb") }}', "above the limit of 1000000"),
    "concat-doubling": (
        '{% set ns = namespace(s="a" * 1000) %}{% for i in range(64) %}'
        "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
        "passed the limit of 1000000",
    ),
    "output-bomb": (
        '{% for i in range(99999) %}{{ "x" * 999 }}{% endfor %}',
        "limit of 1000000",
    ),
    "loop-bomb": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "loops ran more than 100000 steps",
    ),
    "self-include": ('{% include "evil.md.j2" %}', "more than 64 template loads"),
    "self-import": ('{% import "evil.md.j2" as e %}', "more than 64 template loads"),
    "macro-recursion": (
        "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
        "RecursionError",
    ),
    "zero-division": ("{{ 1 / 0 }}", "ZeroDivisionError"),
    "type-error": ('{{ 1 + "a" }}', "TypeError"),
    "overflow": ("{{ 10.0 ** 400 }}", "OverflowError"),
    "include-dotdot": ('{% include "../secret.txt" %}', "not found"),
    "include-absolute": ('{% include "SECRET" %}', "not found"),
    "include-symlink": ('{% include "link.md.j2" %}', "outside the template folders"),
    "include-fifo": ('{% include "fifo.md.j2" %}', "not a regular file"),
    "no-lipsum": ("{{ lipsum(1000000000) }}", "undefined"),
    "no-random": ("{{ [1, 2] | random }}", "No filter named 'random'"),
}

COMMANDS = ("prompt", "modes", "context", "compact --mode", "todo-write refusal")


@pytest.fixture
def evil(tmp_path: Path) -> Path:
    """A modes file whose mode 'evil' renders templates/evil.md.j2 as block and refusal."""
    (tmp_path / "secret.txt").write_text(MARKER)
    folder = tmp_path / "modes"
    folder.mkdir()
    (folder / "link.md.j2").symlink_to(tmp_path / "secret.txt")
    os.mkfifo(folder / "fifo.md.j2")
    modes = folder / "modes.toml"
    modes.write_text(
        '[[modes]]\nname = "evil"\ntitle = "Evil"\nblocks = ["evil.md.j2"]\n'
        'todo = { forbidden = true, refusal = "evil.md.j2" }\n'
    )
    return modes


def _argv(command: str, modes: Path, log: Path) -> list[str]:
    common = ["--modes-file", str(modes)]
    match command:
        case "prompt":
            return ["prompt", "--mode", "evil", *common]
        case "modes":
            return ["modes", *common]
        case "context":
            return ["context", str(log), "--mode", "evil", *common]
        case "compact --mode":
            return [
                "compact", str(log), "--force", "--summarizer", "openai", "--mode", "evil",
                "--base-url", "http://127.0.0.1:9", "--model", "m", "--max-retries", "0", *common,
            ]  # fmt: skip
        case "todo-write refusal":
            todos = json.dumps({"todos": [{"content": "a", "status": "pending"}]})
            return ["todo-write", str(log), "--mode", "evil", "--args", todos, *common]
        case _:
            raise AssertionError(command)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attack_is_one_line_error(
    attack: str, command: str, evil: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each escape or bomb fails fast with one line naming the template; nothing leaks or runs."""
    text, expected = ATTACKS[attack]
    text = text.replace("SECRET", str(tmp_path / "secret.txt"))
    text = text.replace("PWNED", str(tmp_path / "pwned"))
    (evil.parent / "evil.md.j2").write_text(text)
    log = tmp_path / "s.jsonl"
    log.write_text('{"v": 1, "seq": 1, "type": "turn/start", "data": {}}\n')
    before = log.read_bytes()
    started = time.monotonic()
    status = main(_argv(command, evil, log))
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "evil.md.j2" in lines[0] or "link.md.j2" in lines[0] or "fifo.md.j2" in lines[0]
    assert expected in lines[0]
    assert "Traceback" not in err
    assert MARKER not in out + err
    assert not (tmp_path / "pwned").exists()
    assert log.read_bytes() == before
    assert elapsed < 30


class TestRenderBounds:
    def test_string_bomb_allocates_nothing_big(self, tmp_path: Path) -> None:
        """``"a" * 4000000000`` is refused before it allocates: peak memory stays small."""
        (tmp_path / "bomb.md.j2").write_text('{{ "a" * 4000000000 }}')
        tracemalloc.start()
        try:
            with pytest.raises(ConfigError, match=r"bomb\.md\.j2:1: .*above the limit"):
                render("bomb.md.j2", {}, folder=tmp_path)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 50_000_000

    @pytest.mark.parametrize(
        "error", [MemoryError(), RecursionError("deep"), OverflowError("big"), TypeError("t")]
    )
    def test_failures_become_config_errors(
        self, error: BaseException, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An error raised while rendering becomes one ConfigError line naming the template."""
        (tmp_path / "t.md.j2").write_text("{{ 1 }}")

        def boom(*args: object, **kwargs: object) -> str:
            raise error

        monkeypatch.setattr("jinja2.Template.render", boom)
        with pytest.raises(ConfigError, match=rf"t\.md\.j2.*{type(error).__name__}") as info:
            render("t.md.j2", {}, folder=tmp_path)
        assert "\n" not in str(info.value)

    @pytest.mark.parametrize(
        "value", [Path("/etc"), print, object(), {"k": Path("/")}, [lambda: 1], {1: "x"}]
    )
    def test_only_plain_data_crosses(self, value: object) -> None:
        """A path, a callable, an object or a non-string key never reaches a template."""
        with pytest.raises(TypeError, match=r"plain data|not a string"):
            render("core.md.j2", {"x": value})

    def test_plain_data_renders(self, tmp_path: Path) -> None:
        """Strings, numbers, booleans, None, lists and dicts render as before."""
        (tmp_path / "ok.md.j2").write_text(
            "{{ s }} {{ n + 1 }} {{ f }} {{ b }} {{ z }} {{ l | join(',') }} {{ d.k }}"
        )
        data = {"s": "x", "n": 1, "f": 1.5, "b": True, "z": None, "l": ["a", "b"], "d": {"k": 3}}
        assert render("ok.md.j2", data, folder=tmp_path) == "x 2 1.5 True None a,b 3"


class TestTemplateDir:
    @pytest.mark.parametrize("given", ["..", "/etc", "sub/../.."])
    def test_template_dir_outside_is_refused(self, given: str, tmp_path: Path) -> None:
        """A template_dir that leaves the modes file's folder is a ConfigError naming the file."""
        folder = tmp_path / "m"
        (folder / "sub").mkdir(parents=True)
        modes = folder / "modes.toml"
        modes.write_text(
            f'[[modes]]\nname = "x"\ntitle = "X"\ntemplate_dir = "{given}"\nblocks = ["a.j2"]\n'
        )
        with pytest.raises(ConfigError, match=r"modes\.toml: modes\[0\]: template_dir .*outside"):
            load_modes(modes)

    def test_template_dir_symlink_out_is_refused(self, tmp_path: Path) -> None:
        """A template_dir that is a symlink pointing out of the folder is refused too."""
        folder = tmp_path / "m"
        folder.mkdir()
        (folder / "t").symlink_to(tmp_path)
        modes = folder / "modes.toml"
        modes.write_text('[[modes]]\nname = "x"\ntitle = "X"\ntemplate_dir = "t"\n')
        with pytest.raises(ConfigError, match="outside"):
            load_modes(modes)

    def test_modes_file_fifo_is_refused(self, tmp_path: Path) -> None:
        """A FIFO given as the modes file is refused at once instead of blocking on read."""
        fifo = tmp_path / "modes.toml"
        os.mkfifo(fifo)
        with pytest.raises(ConfigError, match="not a regular file"):
            load_modes(fifo)
