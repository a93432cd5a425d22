"""The attack table: each class once, clean; a broken defence counted.

The classes run in this process (`in_process=True`) with one case each and no PostgreSQL server
(those parts are recorded as skipped), so the smoke test stays short; each "broken" test
switches one defence off and checks that the runner counts what it lets through.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from benchmarks.attacks import attack_table, process_attacks
from benchmarks.attacks.attack_kit import Tally, leaks, lost_doubled, missing_bytes, secret_forms
from compaction import secrets
from compaction.errors import CompactionError
from compaction.session import _tool_runs as tool_runs

FAILURES = ("crashes", "lost", "doubled", "leaks", "hangs", "wrong")


def _run(*names: str, cases: int = 1) -> dict[str, Tally]:
    tallies = attack_table.run(cases, 7, only=names, in_process=True, start_postgres=False)
    return {t.attack: t for t in tallies}


@pytest.mark.slow
def test_every_class_runs_once_with_nothing_wrong() -> None:
    """Each class (23 with issue 39's) runs at least one case; none counts a failure."""
    tallies = _run()
    assert list(tallies) == list(attack_table.ATTACKS)
    for name, tally in tallies.items():
        assert tally.cases >= 1, name
        assert {f: getattr(tally, f) for f in FAILURES} == dict.fromkeys(FAILURES, 0), (
            name,
            tally.examples,
        )
    assert "not started" in (tallies["store-url-passwords"].skipped or "")
    assert "postgresql" in (tallies["concurrent-compaction"].skipped or "")
    notes = " ".join(tallies["concurrent-compaction"].notes)
    assert re.search(r"jsonl: landed \d+/\d+", notes)
    assert re.search(r"sqlite: landed \d+/\d+", notes)


def test_a_password_shown_unredacted_is_counted_as_a_leak(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With URL redaction off, the unreachable-server errors print the password: leaks > 0."""
    nothing = re.compile(r"(?!)")
    for name in ("_USERINFO", "_QUERY_PASSWORD", "_KEYWORD_PASSWORD"):
        monkeypatch.setattr(secrets, name, nothing)
    tally = _run("store-url-passwords", cases=2)["store-url-passwords"]
    assert tally.leaks > 0
    assert tally.examples[0].startswith("leaks: ")


def test_a_key_echo_left_in_is_counted_as_a_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the key's removal off, an echoed key (any form) is found in the output or the log."""
    monkeypatch.setattr(secrets, "_remove_secret", lambda text, secret: text)
    tally = _run("key-echoes", cases=3)["key-echoes"]
    assert tally.leaks > 0


def test_two_lists_in_one_response_accepted_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the one-list rule off, the calls are accepted: counted as wrong and as bytes added."""
    monkeypatch.setattr(tool_runs, "calls_in_one_response", lambda messages: 0)
    tally = _run("two-todo-writes")["two-todo-writes"]
    assert tally.wrong > 0
    assert tally.doubled > 0


def test_secret_forms_cover_case_and_base64_at_any_alignment() -> None:
    """The leak check finds the key upper-cased and inside `Basic base64(user:key)`."""
    import base64

    key = "sk-Example-Secret-0042"
    basic = base64.b64encode(f"user:{key}".encode()).decode()
    assert leaks(key, [f"got {key.upper()}"]) == ["text 0"]
    assert leaks(key, ["ok", f"Authorization: Basic {basic}"]) == ["text 1"]
    assert leaks(key, ["nothing here", "sk-***"]) == []
    assert all(len(f) >= 8 for f in secret_forms(key))


def test_lost_and_doubled_bytes() -> None:
    """Bytes missing from the start of the log are lost; bytes added to a refused call doubled."""
    assert lost_doubled(b"abcdef", b"abcdef", appended_ok=False) == (0, 0)
    assert lost_doubled(b"abcdef", b"abcdefXY", appended_ok=False) == (0, 2)
    assert lost_doubled(b"abcdef", b"abcdefXY", appended_ok=True) == (0, 0)
    assert lost_doubled(b"abcdef", b"abXdef", appended_ok=False) == (4, 0)
    assert missing_bytes(["aa", "bbb"], ["aa"]) == (3, 0)
    assert missing_bytes(["aa"], ["aa", "aa", "c"]) == (0, 3)


@pytest.mark.slow
def test_a_conflict_is_wrong_in_a_sql_store_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every compaction refused as `conflict`: wrong in SQLite, the documented retry in JSONL."""

    def refuse(*_: object, **__: object) -> None:
        raise CompactionError("conflict", "writers kept winning")

    monkeypatch.setattr(process_attacks, "compact", refuse)
    tally = _run("concurrent-compaction")["concurrent-compaction"]
    notes = " ".join(tally.notes)
    attempts = {b: int(n) for b, n in re.findall(r"(jsonl|sqlite): landed 0/(\d+)", notes)}
    assert set(attempts) == {"jsonl", "sqlite"}, notes
    assert tally.wrong == attempts["sqlite"] > 0
    assert "conflict" in notes


def test_a_killed_call_left_unanswered_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the placeholder answers off, the resumed requests hold unanswered calls: wrong."""
    from compaction.session import Session, live_views

    monkeypatch.setattr(live_views, "with_answers", lambda calls, payloads: list(payloads))
    monkeypatch.setattr(Session, "answer_open_calls", lambda self, held=(): [])
    tally = _run("killed-tool-call", cases=3)["killed-tool-call"]
    assert tally.wrong > 0


def test_a_phrase_without_a_status_taken_for_an_overflow_is_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the 400-class status rule off, a phrase alone is an overflow: wrong."""
    from compaction.compactor import overflow

    monkeypatch.setattr(overflow, "_status_of", lambda exc: 400)
    tally = _run("overflow-refusals", cases=12)["overflow-refusals"]
    assert tally.wrong > 0


def test_a_forged_span_accepted_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the span check at append off, forged spans are written: wrong, and bytes added."""
    from compaction.session import live_views

    monkeypatch.setattr(live_views, "check_checkpoint_span_at", lambda *args: None)
    tally = _run("append-inputs", cases=12)["append-inputs"]
    assert tally.wrong > 0
    assert tally.doubled > 0


def test_a_checkpoint_per_call_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the floor off, every compact_context call compacts: wrong."""
    from compaction.compactor import tool_calls

    monkeypatch.setattr(tool_calls, "new_tokens", lambda session: 10**9)
    tally = _run("compact-context-floor", cases=2)["compact-context-floor"]
    assert tally.wrong > 0


def test_issue_39_classes_count_a_broken_defence(monkeypatch: pytest.MonkeyPatch) -> None:
    """With each issue-39 defence switched off, its class counts what gets through."""
    from compaction.backends import _clearing, base
    from compaction.stores import _sqlite_checks
    from compaction.tokens import SplitCount
    from compaction.views import _clip_counts
    from harness.commands import stores

    def old_head(self: Any, tokenizer: Any, chars: int) -> Any:
        """The head before issue 39: a cut at the head's very end counted as the head's."""
        for j in range(len(self.cuts) - 1, -1, -1):
            cut = self.cuts[j]
            if cut <= chars and (cut == chars or _clip_counts._is_cut(self.text, cut, chars)):
                rest = self.text[cut:chars]
                part = SplitCount(self.text[: self.cuts[0]], self.upto[j], rest)
                return part, self.before + self.upto[j] + tokenizer.count(rest)
        text = self.text[:chars]
        return SplitCount(text, 0, ""), tokenizer.count(text)

    monkeypatch.setattr(_clip_counts.CutCounts, "head", old_head)
    monkeypatch.setattr(base, "vetted", lambda backend, provider: provider)
    monkeypatch.setattr(
        _clearing,
        "clearable",
        lambda window, keep: frozenset(
            [s for s, m in zip(window.seqs, window.messages, strict=True) if m.role == "tool"][
                :-keep
            ]
        ),
    )
    monkeypatch.setattr(stores, "transcript_hint", lambda args: None)
    monkeypatch.setattr(_sqlite_checks, "has_wal", lambda path: False)
    nothing = re.compile(r"(?!)")
    for name in ("_QUERY_PASSWORD", "_KEYWORD_PASSWORD"):
        monkeypatch.setattr(secrets, name, nothing)
    names = [
        "token-counts",
        "provider-items",
        "result-clearing",
        "quiet-answers",
        "password-keys",
        "sqlite-full-disk",
    ]
    tallies = _run(*names, cases=8)
    for name in names:
        tally = tallies[name]
        assert sum(getattr(tally, f) for f in FAILURES) > 0, (name, tally)
