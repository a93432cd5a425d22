"""`harness sessions URL`: the sessions of a store, with event counts, last activity, open tasks."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from rich.table import Table

from compaction import EventStore, TurnStarted, open_store
from compaction.secrets import redact_url
from compaction.stores import FileStore, SessionInfo
from compaction.views import LatestTodosProjection, TasksProjection
from harness.commands.stores import add_lock_timeout_option, with_lock_timeout
from harness.files import check_file
from harness.output import HelpFormatter, console, examples, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `sessions` command."""
    p = sub.add_parser(
        "sessions",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness sessions sqlite:///sessions.db",
            "harness sessions sqlite:///sessions.db --json",
        ),
        help="list the sessions of a store",
        description=(
            "List every session of a store (jsonl:///folder, sqlite:///file.db, "
            "postgresql://...): its event count, the time of its last event (UTC), the "
            "open tasks (the unfinished items of its latest todo list and the pending and "
            "in-progress tasks of its shared task list) and when its first and last turns "
            "ran, as recorded (an imported transcript keeps its own timestamps)."
        ),
    )
    p.add_argument("url", metavar="URL", help="store URL")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    add_lock_timeout_option(p)
    p.set_defaults(func=run)


def open_tasks(store: EventStore, session: str) -> tuple[int, float | None, float | None]:
    """Count a session's open work, and when it ran (one streaming pass).

    The unfinished items of the latest todo list, plus the shared task list's pending and
    in-progress tasks (deleted and completed ones are not open); then the first and the last
    time its turns recorded (`TurnStartData.at`: an imported transcript's own timestamps), or
    None when none did.
    """
    todos, tasks = LatestTodosProjection(), TasksProjection()
    todo_state, task_state = todos.init(), tasks.init()
    times: list[float] = []
    for event in store.read(session):
        todo_state = todos.apply(todo_state, event)
        task_state = tasks.apply(task_state, event)
        if isinstance(event, TurnStarted) and event.data.at is not None:
            times.append(event.data.at)
    panel, board = todos.view(todo_state), tasks.view(task_state)
    counts = board.counts()
    open_items = sum(1 for t in panel.todos if t.status != "completed")
    first, last = (min(times), max(times)) if times else (None, None)
    return open_items + counts["pending"] + counts["in_progress"], first, last


def _row(store: EventStore, info: SessionInfo) -> dict[str, object]:
    """Return one session's row: events, last activity, open tasks, when its turns ran."""
    count, first, last = open_tasks(store, info.session)
    return {
        "session": info.session,
        "events": info.events,
        "last_activity": _when(info.last_activity),
        "open_tasks": count,
        "first_turn": _when(first),
        "last_turn": _when(last),
    }


def _when(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def run(args: argparse.Namespace) -> int:
    """Print the sessions."""
    store = open_store(with_lock_timeout(args.url, args.lock_timeout), create=False)
    try:
        if isinstance(store, FileStore):
            check_file(store.path, must_exist=True, what="session log")
        rows = [_row(store, info) for info in store.sessions()]
        bad = list(getattr(store, "bad_entries", []))
    finally:
        store.close()
    for line in bad:  # the other sessions are still listed; each stray entry is named
        print(f"harness sessions: skipped: {line}", file=sys.stderr)
    if args.json:
        print_json({"url": redact_url(args.url), "sessions": rows, "bad_entries": bad})
        return 0
    table = Table(title=f"{redact_url(args.url)}: {len(rows)} sessions", title_justify="left")
    table.add_column("session")
    table.add_column("events", justify="right")
    table.add_column("last activity (UTC)")
    table.add_column("open tasks", justify="right")
    table.add_column("first turn (UTC)")
    table.add_column("last turn (UTC)")
    for r in rows:
        table.add_row(*(str(r[k]) if r[k] is not None else "-" for k in r))
    console().print(table)
    return 0
