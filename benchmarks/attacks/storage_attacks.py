"""Attack classes on the stores: URL passwords, damaged SQLite files, `harness copy`.

Each function runs ``kit.cases`` generated cases of one class and counts what went wrong on its
`Tally` (see `benchmarks.attacks.attack_table`). Compaction under concurrent writers is in
`benchmarks.attacks.process_attacks`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from benchmarks.attacks.attack_kit import Kit, Tally, check_bytes, leaks
from benchmarks.attacks.process_attacks import concurrent_compaction, copy_sigkill
from compaction import Session, open_store
from compaction.stores import SqliteStore

__all__ = ["concurrent_compaction", "copy_attacks", "sqlite_damage", "store_urls"]

_PASSWORD_CHARS = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789-_.~"


def _password(kit: Kit) -> str:
    return "Pw" + "".join(kit.rng.choices(_PASSWORD_CHARS, k=kit.rng.randint(10, 30)))


def _url_forms(host: str, password: str) -> list[str]:
    """The password as userinfo, as ``?password=`` (either case) and as a libpq keyword."""
    hostport, _, db = host.partition("/")
    name, _, port = hostport.partition(":")
    return [
        f"postgresql://postgres:{password}@{hostport}/{db}",
        f"postgresql://postgres@{hostport}/{db}?password={password}",
        f"postgresql://postgres@{hostport}/{db}?sslmode=disable&PASSWORD={password}",
        f"host={name} port={port} user=postgres password={password} dbname={db}",
    ]


def _small_log(path: Path) -> Path:
    with Session(path) as session:
        session.start_turn("Fix it", mode="agent")
        session.add_message({"role": "assistant", "content": "done"})
    return path


def _url_commands(url: str, folder: Path, session: str) -> list[list[str | Path]]:
    src = _small_log(folder / "src.jsonl")
    return [
        ["copy", src, url, "--as", session],
        ["sessions", url],
        ["sessions", url, "--json"],
        ["log", url, "--session", session],
        ["log", url, "--session", session, "--json"],
        ["log", url],  # "name the session"
        ["copy", url, f"jsonl:///{folder / 'out'}", "--session", "ghost"],
        ["copy", src, url, "--as", session],  # already holds events
        ["tool", url, "task_list", "--session", session],
    ]


def store_urls(kit: Kit, tally: Tally) -> None:
    """A password in every URL form, against a live server and an unreachable one."""
    hosts = ["127.0.0.1:1/nowhere"]
    if kit.postgres_url is not None:
        hosts.append(kit.postgres_url.removeprefix("postgresql://postgres@"))
    else:
        tally.skipped = f"the live-server half ({kit.why_no_postgres})"
    for i in range(kit.cases):
        password = _password(kit)
        host = hosts[i % len(hosts)]
        url = kit.rng.choice(_url_forms(host, password))
        folder = kit.folder()
        for argv in _url_commands(url, folder, f"att-{i}"):
            done = kit.cli(tally, argv)
            tally.cases += 1
            where = leaks(password, [done.stdout, done.stderr], folder)
            if where:
                tally.fail("leaks", f"{argv[0]} on {url!r}: in {', '.join(where)}")
    if kit.postgres_url is not None:
        store = open_store(kit.postgres_url)
        for info in store.sessions():
            if info.session.startswith("att-"):
                store.delete(info.session)
        store.close()


def _sqlite_store(path: Path, tasks: int) -> None:
    store = SqliteStore(path)
    with Session(store=store, session="s1") as session:
        session.start_turn("Fix it", mode="agent")
        for i in range(tasks):
            session.task_create({"subject": f"task {i} " + "x" * 200})
    store.close()


def _truncate(kit: Kit, path: Path) -> str:
    size = kit.rng.randint(100, path.stat().st_size - 1)
    with path.open("r+b") as f:
        f.truncate(size)
    return f"truncated to {size}"


def _corrupt(kit: Kit, path: Path) -> str:
    page = int.from_bytes(path.read_bytes()[16:18], "big")
    pages = path.stat().st_size // page
    target = kit.rng.randint(1, pages - 1)
    with path.open("r+b") as f:
        f.seek(target * page)
        f.write(bytes(kit.rng.getrandbits(8) for _ in range(page)))
    return f"page {target + 1} of {pages} overwritten"


def _foreign(kit: Kit, path: Path) -> str:
    path.unlink()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, name TEXT)")
    db.execute("INSERT INTO events (name) VALUES ('launch')")
    db.commit()
    db.close()
    return "another application's events table"


def _not_sqlite(kit: Kit, path: Path) -> str:
    path.write_bytes(bytes(kit.rng.getrandbits(8) for _ in range(kit.rng.randint(1, 9000))))
    return "random bytes"


DAMAGE: dict[str, Callable[[Kit, Path], str]] = {
    "truncated": _truncate,
    "corrupt-page": _corrupt,
    "foreign-table": _foreign,
    "not-sqlite": _not_sqlite,
}


def _damaged_case(kit: Kit, tally: Tally, kind: str) -> None:
    path = kit.folder() / "s.db"
    _sqlite_store(path, tasks=kit.rng.randint(5, 40))
    what = DAMAGE[kind](kit, path)
    before = path.read_bytes()
    for argv in (
        ["sessions", f"sqlite:///{path}"],
        ["log", f"sqlite:///{path}", "--session", "s1"],
        [
            "tool",
            f"sqlite:///{path}",
            "task_create",
            "--session",
            "s1",
            "--args",
            '{"subject": "x"}',
        ],
    ):
        done = kit.cli(tally, argv)
        tally.cases += 1
        if done.code not in (2, 3):  # refused as damaged (2), or unreadable (3)
            tally.fail("wrong", f"{what}: {argv[0]} exit {done.code}: {done.stdout[:120]!r}")
        check_bytes(tally, f"{what}: {argv[0]}", before, path.read_bytes(), appended=False)


def _locked_case(kit: Kit, tally: Tally) -> None:
    path = kit.folder() / "s.db"
    _sqlite_store(path, tasks=2)
    store = SqliteStore(path)
    before = store.last_seq("s1")
    store.close()
    holder = sqlite3.connect(path, timeout=5)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        url = f"sqlite:///{path}?timeout=0.2"
        args = '{"subject": "under the lock"}'
        done = kit.cli(tally, ["tool", url, "task_create", "--session", "s1", "--args", args])
        tally.cases += 1
        if done.code != 3:
            tally.fail("wrong", f"write under a held lock: exit {done.code} {done.stderr!r}")
    finally:
        holder.rollback()
        holder.close()
    store = SqliteStore(path)
    if store.last_seq("s1") != before:
        tally.fail("doubled", "write under a held lock landed", 1)
    store.close()


def sqlite_damage(kit: Kit, tally: Tally) -> None:
    """Truncated, corrupt, foreign or random files refused (exit 2/3), unchanged; a lock is 3."""
    kinds = [*DAMAGE, "locked"]
    for i in range(kit.cases):
        kind = kinds[i % len(kinds)]
        if kind == "locked":
            _locked_case(kit, tally)
        else:
            _damaged_case(kit, tally, kind)


def _missing_source(kit: Kit, tally: Tally, folder: Path) -> None:
    done = kit.cli(
        tally, ["copy", folder / "nothing.jsonl", f"jsonl:///{folder / 'o'}", "--as", "x"]
    )
    if done.code != 3 or "0 events" in done.stdout or (folder / "o" / "x.jsonl").exists():
        tally.fail("wrong", f"missing source: exit {done.code} {done.stdout!r}")


def _dangling(kit: Kit, tally: Tally, folder: Path) -> None:
    src = _small_log(folder / "s.jsonl")
    (folder / "o").mkdir()
    target = folder / "elsewhere" / f"victim{kit.rng.randint(0, 99)}.jsonl"
    (folder / "o" / "x.jsonl").symlink_to(target)
    done = kit.cli(tally, ["copy", src, f"jsonl:///{folder / 'o'}", "--as", "x"])
    if done.code != 2 or target.exists():
        tally.fail("wrong", f"dangling symlink: exit {done.code}, target written {target.exists()}")


def _damaged_source(kit: Kit, tally: Tally, folder: Path) -> None:
    db = folder / "src.db"
    store = SqliteStore(db)
    with Session(store=store, session="s") as session:
        for i in range(kit.rng.randint(3, 12)):
            session.add_message({"role": "user", "content": f"m{i}"})
    last = store.last_seq("s")
    store.close()
    con = sqlite3.connect(db)
    con.execute("DELETE FROM events WHERE session = 's' AND seq < ?", (last,))
    con.execute("UPDATE events SET seq = 1 WHERE session = 's'")
    con.commit()
    con.close()
    done = kit.cli(tally, ["copy", f"sqlite:///{db}", f"jsonl:///{folder / 'o'}", "--session", "s"])
    if done.code != 2 or (folder / "o" / "s.jsonl").exists():
        tally.fail("wrong", f"renumbered source copied: exit {done.code}")


def _stray(kit: Kit, tally: Tally, folder: Path) -> None:
    src = folder / "src"
    src.mkdir()
    names = sorted(f"s{k}" for k in range(kit.rng.randint(1, 4)))
    for name in names:
        _small_log(src / f"{name}.jsonl")
    (src / "notes.jsonl").write_bytes(kit.rng.choice((b"not a log\n", b"\x00\xff", b"{}\n")))
    dst = f"sqlite:///{folder / 'd.db'}"
    refused = kit.cli(tally, ["copy", f"jsonl:///{src}", dst])
    kept = kit.cli(tally, ["copy", f"jsonl:///{src}", dst, "--skip-bad"])
    store = open_store(dst)
    copied = sorted(i.session for i in store.sessions())
    store.close()
    if refused.code != 2 or kept.code != 0 or copied != names:
        tally.fail("wrong", f"stray file: exits {refused.code}/{kept.code}, copied {copied}")


def copy_attacks(kit: Kit, tally: Tally) -> None:
    """`harness copy`: killed mid-copy, a missing source, a dangling symlink, a damaged source."""
    kinds: list[Callable[[Kit, Tally, Path], None]] = [
        copy_sigkill, _missing_source, _dangling, _damaged_source, _stray,
    ]  # fmt: skip
    for i in range(kit.cases):
        kinds[i % len(kinds)](kit, tally, kit.folder())
        tally.cases += 1
