"""The one storage seam: every target opens through `open_store`, every import has one writer."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from compaction import ConfigError, LogError, Message, Session, TranscriptError, dump_event
from compaction.importers import import_to_store, import_transcript
from compaction.stores import (
    EventStore,
    FileStore,
    SqliteStore,
    open_session_store,
    open_store,
    session_file,
    write_new_session,
)
from compaction.stores.jsonl import JsonlStore

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
TRANSCRIPT = FIXTURES / "claude_code_small.jsonl"


def store_of(kind: str, tmp_path: Path) -> EventStore:
    """A fresh store of each file-backed and SQL kind, holding session ``s``."""
    match kind:
        case "file":
            return FileStore(tmp_path / "s.jsonl")
        case "folder":
            return JsonlStore(tmp_path / "folder")
        case "sqlite":
            return SqliteStore(tmp_path / "s.db")
        case _:
            raise AssertionError(kind)


KINDS = ["file", "folder", "sqlite"]


class TestOpenStore:
    @pytest.mark.parametrize(
        ("target", "kind"),
        [
            ("s.jsonl", FileStore),
            (Path("sqlite:///s.db"), FileStore),
            ("jsonl:///folder", JsonlStore),
            ("sqlite:///s.db", SqliteStore),
        ],
    )
    def test_every_target_opens_a_store(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str | Path, kind: type
    ) -> None:
        """A path (a Path always) is a one-session FileStore; a URL its backend."""
        monkeypatch.chdir(tmp_path)
        store = open_store(target)
        try:
            assert isinstance(store, kind)
            assert isinstance(store, EventStore)
        finally:
            store.close()

    @pytest.mark.parametrize(
        ("target", "session", "match"),
        [
            ("s.jsonl", "other", "needs a store URL"),
            ("sqlite:///s.db", None, "name the session"),
            ("sqlite:///s.db", "../x", "invalid session id"),
            ("redis://h/x", "a", "not a store URL"),
        ],
    )
    def test_naming_the_session_is_checked(
        self,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        target: str,
        session: str | None,
        match: str,
    ) -> None:
        """A file takes no other session id, a URL needs a valid one: one ConfigError line."""
        monkeypatch.chdir(tmp_path)
        with pytest.raises(ConfigError, match=match):
            open_session_store(target, session)

    def test_a_file_names_its_own_session(self, tmp_path: Path) -> None:
        """open_session_store on s.jsonl names session s, with or without it being given."""
        for given in (None, "s"):
            store, name = open_session_store(tmp_path / "s.jsonl", given)
            store.close()
            assert name == "s"

    def test_session_on_a_path_and_on_its_store_write_the_same_bytes(self, tmp_path: Path) -> None:
        """Session(path) runs on a FileStore; the bytes equal a folder store's session file."""
        with Session(tmp_path / "s.jsonl") as a:
            a.start_turn("hi")
            assert isinstance(a.store, FileStore)
            assert a.log.path == tmp_path / "s.jsonl"
        folder = JsonlStore(tmp_path / "folder")
        with Session(store=folder, session="s") as b:
            b.start_turn("hi")
        folder.close()
        assert (tmp_path / "folder" / "s.jsonl").read_bytes() == (tmp_path / "s.jsonl").read_bytes()


class TestOneWriter:
    @pytest.mark.parametrize("kind", KINDS)
    def test_import_is_the_same_on_every_backend(self, tmp_path: Path, kind: str) -> None:
        """import_to_store writes the events a JSONL import writes, on each backend."""
        ref = tmp_path / "ref.jsonl"
        import_transcript(TRANSCRIPT, ref)
        store = store_of(kind, tmp_path)
        try:
            report = import_to_store(TRANSCRIPT, store, "s")
            got = [dump_event(e) for e in store.read("s")]
        finally:
            store.close()
        assert got == ref.read_text().splitlines()
        assert report.events == len(got)

    @pytest.mark.parametrize("kind", KINDS)
    def test_a_failed_replacing_import_leaves_the_session_as_it_was(
        self, tmp_path: Path, kind: str
    ) -> None:
        """A strict import that fails part-way, with --force, keeps the old session whole."""
        store = store_of(kind, tmp_path)
        try:
            store.append("s", [Message(role="user", content="old")])
            before = [dump_event(e) for e in store.read("s")]
            with pytest.raises(TranscriptError):
                import_to_store(TRANSCRIPT, store, "s", strict=True, overwrite=True)
            assert [dump_event(e) for e in store.read("s")] == before
            assert store.append("s", [Message(role="user", content="next")])[0].seq == 2
        finally:
            store.close()
        leftovers = [p.name for p in tmp_path.rglob(".*importing")]
        assert leftovers == []

    @pytest.mark.parametrize("kind", KINDS)
    def test_a_writer_refuses_a_session_that_holds_events(self, tmp_path: Path, kind: str) -> None:
        """write_new_session without replace stores nothing over an existing session."""
        store = store_of(kind, tmp_path)
        try:
            store.append("s", [Message(role="user", content="mine")])
            with pytest.raises(LogError, match="already holds"):
                write_new_session(store, "s", [])
            assert [e.seq for e in store.read("s")] == [1]
        finally:
            store.close()

    @pytest.mark.parametrize("kind", KINDS)
    def test_a_store_handle_follows_the_replaced_file(self, tmp_path: Path, kind: str) -> None:
        """After a replacing write the same store object reads and appends the new session."""
        store = store_of(kind, tmp_path)
        events: list[Any] = []
        try:
            store.append("s", [Message(role="user", content=str(i)) for i in range(5)])
            list(store.read("s"))
            with Session(tmp_path / "src.jsonl") as src:
                src.start_turn("new")
                events = list(src.events())
            assert write_new_session(store, "s", events, replace=True) == 2
            assert [dump_event(e) for e in store.read("s")] == [dump_event(e) for e in events]
            assert store.append("s", [Message(role="user", content="x")])[0].seq == 3
        finally:
            store.close()

    def test_file_of_a_session(self, tmp_path: Path) -> None:
        """session_file names the file of a file-backed session, None for SQL."""
        folder, sql = JsonlStore(tmp_path / "f"), SqliteStore(tmp_path / "s.db")
        assert session_file(folder, "a") == tmp_path / "f" / "a.jsonl"
        assert session_file(sql, "a") is None
        folder.close()
        sql.close()


def url_branches(source: str) -> list[int]:
    """Return the lines of `source` that call ``is_store_url`` (by name or attribute)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name == "is_store_url":
                lines.append(node.lineno)
    return lines


class TestOneDoor:
    def test_the_checker_finds_a_planted_branch(self) -> None:
        """url_branches sees both call forms and ignores a mere mention."""
        source = "import compaction\nif compaction.is_store_url(x):\n    is_store_url(y)\nz = 1\n"
        assert url_branches(source) == [2, 3]
        assert url_branches("name = 'is_store_url'\n") == []

    def test_only_the_stores_ask_whether_a_target_is_a_url(self) -> None:
        """No module outside compaction/stores calls is_store_url: the seam has one door."""
        found = []
        for folder in ("compaction", "harness", "prompts", "benchmarks", "examples"):
            for path in sorted((ROOT / folder).rglob("*.py")):
                if path.is_relative_to(ROOT / "compaction" / "stores"):
                    continue
                lines = url_branches(path.read_text(encoding="utf-8"))
                found += [f"{path.relative_to(ROOT)}:{n}" for n in lines]
        assert found == []
