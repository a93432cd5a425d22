"""The store contract, run against a JSONL file, a JSONL folder, SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from contracts.store_contract import StoreContract, msg

from compaction import ConfigError, EventStore, Session
from compaction.stores import FileStore
from compaction.stores._postgres import TABLE

pytestmark = pytest.mark.slow


class TestFileStore(StoreContract):
    transactional = False
    one_session = "s"

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return str(tmp_path / "s.jsonl")

    def test_a_session_on_a_path_runs_on_this_store(self, store_url: str) -> None:
        """Session(path).store is a FileStore of the file's one session, named by its stem."""
        with Session(store_url) as s:
            s.start_turn("hi")
            assert isinstance(s.store, FileStore)
            assert isinstance(s.store, EventStore)
            assert [i.session for i in s.store.sessions()] == ["s"]
            assert s.where == store_url

    def test_sessions_lists_the_one_session(self, store: EventStore, store_url: str) -> None:
        """sessions() is empty for a new file, then lists its one session with its count."""
        assert store.sessions() == []
        store.append("s", [msg("1"), msg("2")])
        (info,) = store.sessions()
        assert (info.session, info.events) == ("s", 2)
        assert info.last_activity is not None
        assert info.last_activity > 1e9

    def test_delete_removes_the_file(self, store: EventStore, store_url: str) -> None:
        """delete() removes the file; a new append starts again at 1."""
        store.append("s", [msg("1")])
        assert store.delete("s") is True
        assert not Path(store_url).exists()
        assert store.delete("s") is False
        assert store.append("s", [msg("new")])[0].seq == 1

    @pytest.mark.parametrize("other", ["t", "s.jsonl", "S"])
    def test_another_session_id_is_refused(self, store: EventStore, other: str) -> None:
        """Any id but the file's own is a ConfigError, and nothing is written."""
        with pytest.raises(ConfigError, match="holds one session"):
            store.append(other, [msg("x")])
        assert store.last_seq("s") == 0


class TestJsonlStore(StoreContract):
    transactional = False

    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"jsonl:///{tmp_path / 'sessions'}"


class TestSqliteStore(StoreContract):
    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path / 'sessions.db'}"


class TestPostgresStore(StoreContract):
    @pytest.fixture
    def store_url(self, postgres_url: str) -> str:
        with psycopg.connect(postgres_url, autocommit=True) as db:
            db.execute(f"DROP TABLE IF EXISTS {TABLE}")
        return postgres_url
