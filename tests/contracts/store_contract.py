"""The contract every `EventStore` keeps, as one suite each backend's test class subclasses.

A subclass provides `store_url` (a fresh, empty store) and says whether a transaction rolls back
(`transactional`): SQL stores drop an unfinished transaction, JSONL writes each append as it
happens. Several tests run real processes that open the same URL.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator, Mapping
from itertools import count, cycle
from pathlib import Path
from typing import Any, ClassVar

import pytest
from contracts.writers import children
from hypothesis import HealthCheck, given, settings
from strategies import append_chunk_sizes, event_payload_sequences

from compaction import (
    CheckpointRecorded,
    ConfigError,
    EventStore,
    Message,
    SeqConflictError,
    Session,
    SummaryInput,
    TodoWritten,
    TurnStartData,
    check_log,
    compact,
    dump_event,
    open_store,
)

_ids = count()


def msg(text: str) -> Message:
    return Message(role="user", content=text)


class StoreContract:
    """Behaviour every backend shares; subclass and provide the `store_url` fixture."""

    transactional: ClassVar[bool] = True
    """Whether an unfinished transaction leaves nothing (SQL) or what it appended (JSONL)."""
    one_session: ClassVar[str | None] = None
    """The id of the only session a one-session store holds (a JSONL file); None for many."""

    def sid(self, name: str) -> str:
        """Return the session id a test uses: `name`, or a one-session store's own id."""
        return self.one_session or name

    def needs_many_sessions(self) -> None:
        """Skip a test about several sessions on a store that holds one (it has its own)."""
        if self.one_session is not None:
            pytest.skip("a one-session store: its subclass tests sessions() and delete()")

    @pytest.fixture
    def store(self, store_url: str) -> Iterator[EventStore]:
        s = open_store(store_url)
        yield s
        s.close()

    def test_is_an_event_store(self, store: EventStore) -> None:
        """The backend satisfies the EventStore protocol and reopens from its own URL."""
        assert isinstance(store, EventStore)
        store.append(self.sid("a"), [msg("x")])
        again = open_store(store.url)
        try:
            assert [e.seq for e in again.read(self.sid("a"))] == [1]
        finally:
            again.close()

    def test_append_numbers_from_one_and_reads_back_identical(self, store: EventStore) -> None:
        """Appends get seqs 1..n; reading gives back the same events, byte for byte."""
        sid = self.sid("s1")
        first = store.append(sid, [TurnStartData(), msg("hello")])
        second = store.append(sid, [msg("again")])
        assert [e.seq for e in first + second] == [1, 2, 3]
        assert [dump_event(e) for e in store.read(sid)] == [dump_event(e) for e in first + second]
        assert store.last_seq(sid) == 3
        if self.one_session is None:
            assert store.last_seq("never") == 0
            assert list(store.read("never")) == []

    def test_read_since_a_seq_streams_in_order(self, store: EventStore) -> None:
        """read(after=k) yields seq k+1 onwards, across more rows than one page."""
        store.append(self.sid("big"), [msg(str(i)) for i in range(2500)])
        assert [e.seq for e in store.read(self.sid("big"), after=2490)] == list(range(2491, 2501))
        stream = store.read(self.sid("big"))
        assert next(iter(stream)).seq == 1
        assert sum(1 for _ in store.read(self.sid("big"))) == 2500

    def test_stale_expected_seq_is_rejected_not_merged(self, store: EventStore) -> None:
        """An append naming an old last seq stores nothing and reports the current seq."""
        store.append(self.sid("s"), [msg("a")], expected_seq=0)
        with pytest.raises(SeqConflictError) as info:
            store.append(self.sid("s"), [msg("b"), msg("c")], expected_seq=0)
        assert (info.value.expected, info.value.current) == (0, 1)
        assert [e.data.content for e in store.read(self.sid("s"))] == ["a"]  # type: ignore[union-attr]
        assert store.append(self.sid("s"), [msg("b")], expected_seq=1)[0].seq == 2

    def test_append_many_is_all_or_nothing(self, store: EventStore) -> None:
        """An append whose later item is not an event payload stores none of its items."""
        store.append(self.sid("s"), [msg("a")])
        bad: list[Any] = [msg("b"), object()]
        with pytest.raises(TypeError):
            store.append(self.sid("s"), bad)
        assert [e.seq for e in store.read(self.sid("s"))] == [1]

    def test_exception_inside_a_transaction(self, store: EventStore) -> None:
        """An error inside transaction() rolls its appends back (SQL) or keeps them (JSONL)."""
        store.append(self.sid("r"), [msg("kept")])

        def fail_inside() -> None:
            with store.transaction(self.sid("r")):
                store.append(self.sid("r"), [msg("inside")])
                raise RuntimeError("boom")

        with pytest.raises(RuntimeError, match="boom"):
            fail_inside()
        texts = [e.data.content for e in store.read(self.sid("r"))]  # type: ignore[union-attr]
        assert texts == (["kept"] if self.transactional else ["kept", "inside"])
        assert store.append(self.sid("r"), [msg("after")])[0].seq == len(texts) + 1

    def test_sessions_are_listed_and_independent(self, store: EventStore) -> None:
        """Each session numbers its own seqs; sessions() lists ids, counts and activity."""
        self.needs_many_sessions()
        store.append(self.sid("b"), [msg("1"), msg("2"), msg("3")])
        store.append(self.sid("a"), [msg("1"), msg("2")])
        infos = store.sessions()
        assert [(i.session, i.events) for i in infos] == [("a", 2), ("b", 3)]
        assert all(i.last_activity is not None and i.last_activity > 1e9 for i in infos)

    def test_delete_removes_one_session(self, store: EventStore) -> None:
        """delete() drops a session's events only; a new append there starts again at 1."""
        self.needs_many_sessions()
        store.append(self.sid("a"), [msg("1")])
        store.append(self.sid("b"), [msg("1")])
        assert store.delete(self.sid("a")) is True
        assert store.delete(self.sid("a")) is False
        assert [i.session for i in store.sessions()] == ["b"]
        assert list(store.read(self.sid("a"))) == []
        assert store.append(self.sid("a"), [msg("new")])[0].seq == 1

    @pytest.mark.parametrize("bad", ["", "../escape", "a/b", ".hidden", "x" * 201])
    def test_bad_session_ids_are_refused(self, store: EventStore, bad: str) -> None:
        """A session id that could name something outside the store is a ConfigError."""
        with pytest.raises(ConfigError, match="invalid session id"):
            store.append(bad, [msg("x")])

    def test_transaction_serializes_read_then_append(self, store_url: str) -> None:
        """Four processes read-then-append under transaction: no update is ever lost."""
        script = """
            import sys
            from compaction import Message, open_store
            store, sid = open_store(sys.argv[1]), sys.argv[2]
            for i in range(25):
                with store.transaction(sid):
                    last = store.last_seq(sid)
                    content = f"after {last}"
                    store.append(sid, [Message(role="user", content=content)], expected_seq=last)
            store.close()
        """
        children(script, *[[store_url, self.sid("t")]] * 4)
        store = open_store(store_url)
        try:
            events = list(store.read(self.sid("t")))
        finally:
            store.close()
        assert [e.seq for e in events] == list(range(1, 101))
        assert [e.data.content for e in events] == [f"after {i}" for i in range(100)]  # type: ignore[union-attr]

    def test_several_writer_processes(self, store_url: str) -> None:
        """Four processes appending batches: seqs 1..n, each batch contiguous, order kept."""
        script = """
            import sys
            from compaction import Message, open_store
            store, sid = open_store(sys.argv[1]), sys.argv[3]
            w = sys.argv[2]
            for i in range(40):
                store.append(sid, [Message(role="user", content=f"{w} {i} {k}") for k in range(3)])
            store.close()
        """
        children(script, *[[store_url, str(w), self.sid("w")] for w in range(4)])
        store = open_store(store_url)
        try:
            texts = [
                e.data.content
                for e in store.read(self.sid("w"))
                if isinstance(e.data, Message) and isinstance(e.data.content, str)
            ]
            assert store.last_seq(self.sid("w")) == 480
        finally:
            store.close()
        batches = [texts[i : i + 3] for i in range(0, 480, 3)]
        for batch in batches:
            writer, i = batch[0].split()[:2]
            assert batch == [f"{writer} {i} {k}" for k in range(3)]
        for w in range(4):
            mine = [int(b[0].split()[1]) for b in batches if b[0].startswith(f"{w} ")]
            assert mine == list(range(40))

    def test_kill_mid_transaction(self, store: EventStore, store_url: str) -> None:
        """A writer SIGKILLed inside a transaction frees the session and leaves a valid log."""
        store.append(self.sid("k"), [msg("before 1"), msg("before 2")])
        script = """
            import sys
            from compaction import Message, open_store
            store, sid = open_store(sys.argv[1]), sys.argv[2]
            with store.transaction(sid):
                store.append(sid, [Message(role="user", content=f"doomed {i}") for i in range(3)])
                print("inside", flush=True)
                sys.stdin.read()
        """
        with subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(script), store_url, self.sid("k")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        ) as proc:
            assert proc.stdout is not None
            assert proc.stdout.readline() == "inside\n"
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(timeout=60) == -signal.SIGKILL
        after = open_store(store_url)
        try:
            (event,) = after.append(self.sid("k"), [msg("after")])
            texts = [e.data.content for e in after.read(self.sid("k"))]  # type: ignore[union-attr]
            check_log(after.read(self.sid("k")))
        finally:
            after.close()
        doomed = [] if self.transactional else [f"doomed {i}" for i in range(3)]
        assert texts == ["before 1", "before 2", *doomed, "after"]
        assert event.seq == len(texts)

    # Each backend's subclass runs this with its own store; every example uses a new session id.
    @settings(
        max_examples=8,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.differing_executors,
        ],
    )
    @given(payloads=event_payload_sequences, chunks=append_chunk_sizes)
    def test_session_on_store_equals_session_on_jsonl(
        self, store: EventStore, payloads: list[Any], chunks: list[int]
    ) -> None:
        """The same appends give the same events and the same views on this store and JSONL."""
        sid = self.sid(f"p{next(_ids)}")
        store.delete(sid)
        with tempfile.TemporaryDirectory() as tmp:
            ref_path = Path(tmp) / "ref.jsonl"
            with Session(store=store, session=sid) as live, Session(ref_path) as ref:
                rest, sizes = list(payloads), cycle(chunks)
                while rest:
                    n = next(sizes)
                    live.append_many(rest[:n])
                    ref.append_many(rest[:n])
                    rest = rest[n:]
                assert live.context == ref.context
            stored = [dump_event(e) for e in store.read(sid)]
            assert stored == ref_path.read_bytes().decode().split("\n")[:-1]
            with Session(store=store, session=sid) as again, Session(ref_path) as ref:
                assert again.applied_seq == ref.applied_seq == len(payloads)
                assert (again.todos, again.latest_todos) == (ref.todos, ref.latest_todos)
                assert again.context == ref.context
                assert again.usage == ref.usage
                check_log(again.events())

    def test_compaction_carries_the_list_another_writer_appended(self, store: EventStore) -> None:
        """Compaction on a store session recomputes when a writer appends mid-summary."""
        sid = self.sid("c")

        class Interfering:
            name = "interfering"
            calls = 0

            def summarize(self, span: SummaryInput) -> Mapping[str, str]:
                Interfering.calls += 1
                if Interfering.calls == 1:
                    store.append(sid, [todo("late task")])
                return {}

        with Session(store=store, session=sid) as s:
            s.start_turn("do it")
            s.todo_write(json.dumps({"todos": [{"content": "early", "status": "pending"}]}))
            s.add_message({"role": "assistant", "content": "ok"})
            s.start_turn("more")
            result = compact(s, force=True, summarizer=Interfering())
        assert Interfering.calls == 2
        assert result.data.pending == ("late task",)
        events = list(store.read(sid))
        check_log(events)
        assert isinstance(events[-1], CheckpointRecorded)
        assert isinstance(events[-2], TodoWritten)


def todo(content: str) -> Any:
    from compaction import TodoItem, TodoWriteData

    return TodoWriteData(todos=(TodoItem(content=content, status="pending"),))
