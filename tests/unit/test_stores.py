"""Store URLs, Session.open, copying, and the store benchmark's shape (small sizes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.speed import store_comparison
from compaction import ConfigError, LogError, Message, Session, open_store
from compaction.stores import JsonlStore, SqliteStore, copy_session, is_store_url
from compaction.stores.postgres import _redact


class TestUrls:
    @pytest.mark.parametrize(
        ("target", "expected"),
        [
            ("sqlite:///s.db", True),
            ("postgresql://u@h/db", True),
            ("postgres://u@h/db", True),
            ("jsonl:///dir", True),
            ("s.jsonl", False),
            ("http://example.invalid/x", False),
            (Path("sqlite:///s.db"), False),
        ],
    )
    def test_is_store_url(self, target: str | Path, expected: bool) -> None:
        """Only known schemes with :// are store URLs; a Path never is."""
        assert is_store_url(target) is expected

    def test_relative_and_absolute_paths(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """sqlite:///rel.db is relative to the working folder; four slashes make it absolute."""
        monkeypatch.chdir(tmp_path)
        rel = open_store("sqlite:///rel.db")
        absolute = open_store(f"sqlite:///{tmp_path / 'abs.db'}")
        try:
            assert isinstance(rel, SqliteStore)
            assert rel.url == f"sqlite:///{tmp_path / 'rel.db'}"
            assert absolute.url == f"sqlite:///{tmp_path / 'abs.db'}"
        finally:
            rel.close()
            absolute.close()
        assert isinstance(open_store(f"jsonl:///{tmp_path}"), JsonlStore)

    @pytest.mark.parametrize(
        ("url", "match"),
        [
            ("redis://localhost", "not a store URL"),
            ("sqlite://", "three slashes"),
            ("sqlite:///", "three slashes"),
        ],
    )
    def test_bad_urls(self, url: str, match: str) -> None:
        """Unknown schemes and missing paths are ConfigErrors naming the form to use."""
        with pytest.raises(ConfigError, match=match):
            open_store(url)

    def test_password_never_shown(self) -> None:
        """A PostgreSQL URL's password is replaced in every message built from it."""
        assert _redact("postgresql://bob:s3cret@db:5432/x") == "postgresql://bob:***@db:5432/x"
        assert _redact("postgresql://bob@db/x") == "postgresql://bob@db/x"

    def test_unreachable_postgres_is_one_log_error(self) -> None:
        """A server that refuses connections gives a LogError without the password."""
        with pytest.raises(LogError, match=r"postgresql://u:\*\*\*@127\.0\.0\.1:9/x") as info:
            open_store("postgresql://u:pw@127.0.0.1:9/x?connect_timeout=2")
        assert "pw@" not in str(info.value)


class TestSessionOpen:
    def test_open_sqlite_and_reopen(self, tmp_path: Path) -> None:
        """Session.open(url, session=...) appends and replays through the store."""
        url = f"sqlite:///{tmp_path / 's.db'}"
        with Session.open(url, session="abc") as s:
            s.start_turn("hello")
            assert s.where == f"{url}#abc"
        with Session.open(url, session="abc") as s:
            assert s.applied_seq == 2
            assert [m.text() for m in s.context.messages] == ["hello"]
        with Session.open(url, session="other") as s:
            assert s.applied_seq == 0

    def test_store_without_session_and_session_without_store(self, tmp_path: Path) -> None:
        """A store URL needs a session id; a JSONL path refuses one."""
        with pytest.raises(ConfigError, match="name the session"):
            Session.open(f"sqlite:///{tmp_path / 's.db'}")
        with pytest.raises(ConfigError, match="needs a store URL"):
            Session.open(str(tmp_path / "s.jsonl"), session="x")
        with pytest.raises(ConfigError, match="needs a log path"):
            Session()

    def test_jsonl_default_is_unchanged_on_disk(self, tmp_path: Path) -> None:
        """Session('s.jsonl') writes the same bytes as the JSONL store's session file."""
        with Session(tmp_path / "s.jsonl") as a:
            a.start_turn("hi")
        store = JsonlStore(tmp_path / "folder")
        with Session(store=store, session="s") as b:
            b.start_turn("hi")
        store.close()
        assert (tmp_path / "folder" / "s.jsonl").read_bytes() == (tmp_path / "s.jsonl").read_bytes()

    def test_store_session_has_no_jsonl_log(self, tmp_path: Path) -> None:
        """Asking a store session for its JSONL log is a ConfigError, not an AttributeError."""
        with (
            Session.open(f"sqlite:///{tmp_path / 's.db'}", session="a") as s,
            pytest.raises(ConfigError, match="has no JSONL log"),
        ):
            _ = s.log


class TestCopy:
    def test_copy_refuses_an_existing_session(self, tmp_path: Path) -> None:
        """Copying onto a session that holds events writes nothing."""
        src, dst = JsonlStore(tmp_path / "a"), SqliteStore(tmp_path / "b.db")
        src.append("s", [Message(role="user", content="x")])
        dst.append("s", [Message(role="user", content="mine")])
        with pytest.raises(LogError, match="already holds 1 events"):
            copy_session(src, "s", dst)
        assert [e.data.content for e in dst.read("s")] == ["mine"]  # type: ignore[union-attr]
        assert copy_session(src, "s", dst, "t") == 1
        src.close()
        dst.close()


class TestBenchmark:
    def test_small_run_has_every_figure_and_ratio(self, tmp_path: Path) -> None:
        """A tiny run reports appends, reopen, memory and concurrency, with ratios to JSONL."""
        out = tmp_path / "stores.json"
        store_comparison.main(
            ["--quick", "--sizes", "40", "80", "--backends", "jsonl", "sqlite", "--out", str(out)],
            say=lambda _: None,
        )
        doc = json.loads(out.read_text())
        assert list(doc["backends"]) == ["jsonl", "sqlite"]
        for figures in doc["backends"].values():
            assert [r["events"] for r in figures["per_size"]] == [40, 80]
            assert all(r["appends_per_s"] > 0 and r["reopen_s"] >= 0 for r in figures["per_size"])
            assert set(figures["concurrent_appends_per_s"]) == {"1", "4", "16"}
        ratio = doc["ratios"]["sqlite_vs_jsonl"]
        expected = round(
            doc["backends"]["sqlite"]["per_size"][0]["appends_per_s"]
            / doc["backends"]["jsonl"]["per_size"][0]["appends_per_s"],
            3,
        )
        assert ratio["appends_per_s"][0] == expected
        report = out.with_suffix(".md").read_text()
        assert "| sqlite | 80 |" in report
        assert "sqlite_vs_jsonl" in report
