"""The format readers' contracts, pinned on small hand-written records (issue 25, part C).

`scripts/mutate --group importer-readers` mutates the format readers (`claude_code.py`,
`codex.py`, ...); these tests import hand-written transcripts through `compaction.importers.load`
and assert on the events written (a message's content and origin, a request's text, the skips
reported), so a mutant that changes what a view shows is caught without a real transcript.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction.events import Event, ImagePart, ImageURL, MessageAdded, TextPart
from compaction.importers import ImportReport, load


def _write(tmp_path: Path, *records: dict[str, object]) -> Path:
    path = tmp_path / "s.jsonl"
    lines = [json.dumps({"sessionId": "s", "uuid": f"u{i}", **r}) for i, r in enumerate(records)]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _import(path: Path) -> tuple[list[Event], ImportReport]:
    report = ImportReport(path=str(path))
    return list(load(path, "claude-code", report=report)), report


def _messages(events: list[Event], role: str) -> list[MessageAdded]:
    return [e for e in events if isinstance(e, MessageAdded) and e.data.role == role]


def _user(content: object) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": content}}


PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


class TestImages:
    def test_a_base64_image_becomes_a_data_url_beside_the_text(self, tmp_path: Path) -> None:
        """A user message's base64 image is kept as a data URL part after its text part."""
        path = _write(
            tmp_path, _user([{"type": "text", "text": "look"}, {"type": "image", "source": PNG}])
        )
        events, _ = _import(path)
        [message] = _messages(events, "user")
        assert message.data.content == (
            TextPart(text="look"),
            ImagePart(image_url=ImageURL(url="data:image/png;base64,iVBORw0KGgo=")),
        )

    def test_an_image_by_url_keeps_its_url(self, tmp_path: Path) -> None:
        """An image whose source is a URL is kept as that URL."""
        source = {"type": "url", "url": "https://example.invalid/a.png"}
        path = _write(tmp_path, _user([{"type": "image", "source": source}]))
        events, _ = _import(path)
        [message] = _messages(events, "user")
        assert message.data.content == (
            ImagePart(image_url=ImageURL(url="https://example.invalid/a.png")),
        )

    @pytest.mark.parametrize(
        "source", [None, "iVBORw0KGgo=", {"type": "file", "file_id": "f1"}, {"url": 7}]
    )
    def test_an_image_without_a_usable_source_is_skipped(
        self, tmp_path: Path, source: object
    ) -> None:
        """No mapping, no base64 data and no URL string: the block is skipped and reported."""
        path = _write(
            tmp_path, _user([{"type": "text", "text": "look"}, {"type": "image", "source": source}])
        )
        events, report = _import(path)
        [message] = _messages(events, "user")
        assert message.data.content == "look"
        assert report.skipped["user image block (not kept)"] == 1

    def test_a_tool_result_keeps_its_image(self, tmp_path: Path) -> None:
        """A tool result holding text and an image keeps both, in order."""
        call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file": "a.png"}}
        result = {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": [{"type": "text", "text": "the file"}, {"type": "image", "source": PNG}],
        }
        path = _write(
            tmp_path,
            _user("show me a.png"),
            {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [call]}},
            _user([result]),
        )
        events, _ = _import(path)
        [tool] = _messages(events, "tool")
        assert tool.data.content == (
            TextPart(text="the file"),
            ImagePart(image_url=ImageURL(url="data:image/png;base64,iVBORw0KGgo=")),
        )


class TestTypedCommands:
    @pytest.mark.parametrize(
        ("content", "typed"),
        [
            (
                "<command-message>review</command-message>\n<command-name>/review</command-name>"
                "\n<command-args>this branch</command-args>",
                "/review this branch",
            ),
            (
                "<command-name>review</command-name><command-args>  a b </command-args>",
                "/review a b",
            ),
            (
                "<command-message>m</command-message><command-args>go on</command-args>",
                "/command go on",
            ),
        ],
    )
    def test_a_command_with_arguments_is_the_users_request(
        self, tmp_path: Path, content: str, typed: str
    ) -> None:
        """The arguments are typed words: the request reads `/name args` (a `/` added)."""
        events, _ = _import(_write(tmp_path, _user(content)))
        [message] = _messages(events, "user")
        assert (message.data.origin, message.data.content) == ("user", typed)

    @pytest.mark.parametrize(
        "content",
        [
            "<command-name>/exit</command-name>\n <command-args>   </command-args>",
            "<command-name>/clear</command-name>",
        ],
    )
    def test_a_command_without_arguments_stays_a_command(
        self, tmp_path: Path, content: str
    ) -> None:
        """No arguments (or blank ones): the tags are kept whole, as a command."""
        events, _ = _import(_write(tmp_path, _user(content)))
        [message] = _messages(events, "user")
        assert (message.data.origin, message.data.content) == ("command", content)
