"""The store contract, run against JSONL, SQLite and a real PostgreSQL server."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from contracts.store_contract import StoreContract

from compaction.stores.postgres import TABLE

pytestmark = pytest.mark.slow


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
