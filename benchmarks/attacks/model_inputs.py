"""Attack classes on what a model or a server sends: caps, tool calls, task tools, key echoes.

Each function runs ``kit.cases`` generated cases of one class and counts what went wrong on its
`Tally` (see `benchmarks.attacks.attack_table`). A refused call must leave the log byte-identical;
an accepted one may only append.
"""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchmarks.attacks.attack_kit import CLOSED, Kit, Tally, check_bytes, leaks, read_or_empty
from compaction import HarnessError, Session, TaskCreated, TaskUpdated, TodoWritten, call_tool

INVISIBLE = ("\u200b", "\ufeff", "\u202e", "\x00", "\u200e", "\u2800", "\u00ad", " ", "\t")
BAD_NAMES = ("{}\n", "{}\r\n", "{} ", "\n{}", "{}\x00", "{}\u200b")
CAP = 2000


def _new_log(kit: Kit, *, tasks: int = 0, turn: bool = True) -> Path:
    log = kit.folder() / "s.jsonl"
    with Session(log) as session:
        if turn:
            session.start_turn("Fix it", mode="agent")
        for i in range(tasks):
            session.task_create({"subject": f"task {i}"})
    return log


def _tool(kit: Kit, tally: Tally, log: Path, name: str, args: object, agent: str = "main") -> int:
    text = args if isinstance(args, str) else json.dumps(args)
    # On stdin, as a model's arguments come: one argv string is capped at 128 KiB on Linux.
    return kit.cli(tally, ["tool", log, name, "--agent", agent], stdin=text).code


def _refused(kit: Kit, tally: Tally, log: Path, name: str, args: object, case: str) -> None:
    """One call that must be refused (exit 1) with the log left byte-identical."""
    before = read_or_empty(log)
    code = _tool(kit, tally, log, name, args)
    tally.cases += 1
    if code != 1:
        tally.fail("wrong", f"{case}: exit {code}, expected a refusal")
    check_bytes(tally, case, before, read_or_empty(log), appended=False)


def _oversize(kit: Kit) -> tuple[str, dict[str, Any], str]:
    size = kit.rng.choice((CAP + 1, CAP + 400, 50_000, 900_000))
    text = kit.rng.choice("ab\u4e2dx") * size + "end"  # no blank: trimming would shorten it
    tool = kit.rng.choice(("todo_write", "task_create", "task_create_description"))
    if tool == "todo_write":
        return "todo_write", {"todos": [{"content": text, "status": "pending"}]}, f"item {size}"
    if tool == "task_create":
        return "task_create", {"subject": text}, f"subject {size}"
    return "task_create", {"subject": "s", "description": text}, f"description {size}"


def item_caps(kit: Kit, tally: Tally) -> None:
    """Over-cap items as JSON text (the CLI) and as mappings (the API): each refused."""
    for i in range(kit.cases):
        name, args, what = _oversize(kit)
        log = _new_log(kit)
        if i % 2 == 0:
            _refused(kit, tally, log, name, args, f"{name} {what} as JSON text")
            continue
        before = log.read_bytes()
        tally.cases += 1
        try:
            with Session(log) as session:
                result = call_tool(session, name, args)
        except Exception as exc:  # any escape from the tool is the crash counted
            tally.fail("crashes", f"{name} {what} as a mapping: {type(exc).__name__}: {exc}")
            continue
        if not result.is_error:
            tally.fail("wrong", f"{name} {what} as a mapping accepted")
        check_bytes(tally, f"{name} {what}", before, log.read_bytes(), appended=False)


def _assistant(log: Path, calls: int, kit: Kit) -> list[str]:
    lists = [
        json.dumps({"todos": [{"content": f"list {k} item", "status": "in_progress"}]})
        for k in range(calls)
    ]
    tool_calls = [
        {"id": f"c{k}", "type": "function", "function": {"name": "todo_write", "arguments": a}}
        for k, a in enumerate(lists)
    ]
    if kit.rng.random() < 0.5:
        tool_calls.insert(1, {"id": "r", "type": "function",
                              "function": {"name": "read_file", "arguments": "{}"}})  # fmt: skip
    with Session(log) as session:
        session.add_message({"role": "assistant", "content": "", "tool_calls": tool_calls})
    return lists


def two_todo_writes(kit: Kit, tally: Tally) -> None:
    """A response holding 2-4 `todo_write` calls, each run by `harness tool`: all refused."""
    for _ in range(kit.cases):
        log = _new_log(kit)
        calls = kit.rng.randint(2, 4)
        for k, args in enumerate(_assistant(log, calls, kit)):
            _refused(kit, tally, log, "todo_write", args, f"call {k + 1} of {calls}")
        with Session(log) as session:
            if any(isinstance(e, TodoWritten) for e in session.events()):
                tally.fail("wrong", f"{calls} calls: a list was written")


def _task_events(log: Path) -> int:
    with Session(log) as session:
        return sum(isinstance(e, TaskCreated | TaskUpdated) for e in session.events())


def _version(log: Path) -> int:
    with Session(log) as session:
        task = session.tasks.get("1")
        return task.version if task is not None else 0


def _stale_cli(kit: Kit, tally: Tally) -> None:
    log = _new_log(kit, tasks=1)
    for m in range(kit.rng.randint(1, 3)):  # another process moves the task on
        status = ("in_progress", "pending")[m % 2]
        _tool(kit, tally, log, "task_update", {"id": "1", "status": status}, "w1")
    current = _version(log)
    if current < 2:
        tally.fail("wrong", f"the moves left task 1 at v{current}")
        return
    stale = kit.rng.randint(1, current - 1)
    _refused(
        kit, tally, log, "task_update",
        {"id": "1", "subject": "overwritten", "owner": "lead", "version": stale},
        f"v{stale} when at v{current}",
    )  # fmt: skip
    before = _task_events(log)
    tally.cases += 1
    args = {"id": "1", "subject": "current", "owner": "lead", "version": current}
    if _tool(kit, tally, log, "task_update", args, "lead") != 0 or _task_events(log) != before + 1:
        tally.fail("wrong", f"v{current} (current) not applied once")


def _stale_agents(kit: Kit, tally: Tally) -> None:
    log = _new_log(kit)
    agents = [f"a{k}" for k in range(kit.rng.randint(2, 4))]
    with Session(log, agent="lead") as session:
        call_tool(session, "task_create", {"subject": "Parse flags"}, agent="lead")
        for agent in agents:
            call_tool(session, "task_list", agent=agent)
        mover, *others = kit.rng.sample(agents, len(agents))
        call_tool(session, "task_update", {"id": "1", "owner": mover}, agent=mover)
        for agent in others:
            seq = session.applied_seq
            tally.cases += 1
            result = call_tool(
                session, "task_update", {"id": "1", "status": "completed"}, agent=agent
            )
            if not result.is_error or session.applied_seq != seq:
                tally.fail("wrong", f"{agent}'s stale update after {mover}'s applied")


def stale_versions(kit: Kit, tally: Tally) -> None:
    """A stale `version` across `harness tool` processes, and the stale rule per agent."""
    for i in range(kit.cases):
        try:
            (_stale_cli if i % 2 == 0 else _stale_agents)(kit, tally)
        except HarnessError as exc:
            tally.fail("crashes", f"stale case {i}: {type(exc).__name__}: {exc}")


def task_names(kit: Kit, tally: Tally) -> None:
    """Owner names with a trailing newline or other extra: refused as owner and as agent."""
    for _ in range(kit.cases):
        log = _new_log(kit, tasks=1)
        name = kit.rng.choice(BAD_NAMES).format(kit.rng.choice(("w1", "lead", "agent-7")))
        _refused(kit, tally, log, "task_update", {"id": "1", "owner": name}, f"owner {name!r}")
        if "\x00" in name and not kit.in_process:
            continue  # an argv cannot hold NUL: tried as owner only
        before = log.read_bytes()
        tally.cases += 1
        code = _tool(kit, tally, log, "task_list", {}, agent=name)
        if code != 2:
            tally.fail("wrong", f"--agent {name!r}: exit {code}, expected a usage error")
        check_bytes(tally, f"agent {name!r}", before, log.read_bytes(), appended=False)


def invisible_subjects(kit: Kit, tally: Tally) -> None:
    """Subjects of only invisible characters: refused by task_create and task_update."""
    for _ in range(kit.cases):
        log = _new_log(kit, tasks=1)
        subject = "".join(kit.rng.choices(INVISIBLE, k=kit.rng.randint(1, 6)))
        tool = kit.rng.choice(("task_create", "task_update"))
        args = {"subject": subject} if tool == "task_create" else {"id": "1", "subject": subject}
        _refused(kit, tally, log, tool, args, f"{tool} subject {subject!r}")


def closed_stdin(kit: Kit, tally: Tally) -> None:
    """`harness tool LOG NAME` with stdin closed: exit 3, one line, nothing appended."""
    names = ("task_create", "task_update", "todo_write")
    for i in range(kit.cases):
        log = _new_log(kit, tasks=1)
        before = log.read_bytes()
        done = kit.cli(tally, ["tool", log, names[i % 3]], stdin=CLOSED)
        tally.cases += 1
        if done.code != 3 or len(done.stderr.strip().splitlines()) != 1:
            tally.fail("wrong", f"{names[i % 3]} stdin closed: exit {done.code} {done.stderr!r}")
        check_bytes(tally, "closed stdin", before, log.read_bytes(), appended=False)


class _Echo(BaseHTTPRequestHandler):
    """A chat-completions server on 127.0.0.1 that echoes the key back, transformed."""

    form = "upper"
    status = 401

    def log_message(self, *args: object) -> None:
        """Stay quiet."""

    def do_POST(self) -> None:
        """Echo the Authorization header's key in the chosen form."""
        self.rfile.read(int(self.headers.get("content-length", "0")))
        key = self.headers.get("authorization", "").removeprefix("Bearer ")
        echo = {
            "upper": key.upper(),
            "lower": key.lower(),
            "swapcase": key.swapcase(),
            "base64": base64.b64encode(key.encode()).decode(),
            "basic": base64.b64encode(f"user:{key}".encode()).decode(),
        }[type(self).form]
        if type(self).status == 401:
            body: dict[str, Any] = {"error": {"message": f"bad key {echo}"}}
        else:
            text = f"## Next Step\n\nYou sent {echo}"
            body = {"model": f"m {echo}", "choices": [{"message": {"role": "assistant",
                    "content": text}, "finish_reason": "stop", "index": 0}]}  # fmt: skip
        data = json.dumps(body).encode()
        self.send_response(type(self).status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _echo_log(kit: Kit) -> Path:
    log = kit.folder() / "s.jsonl"
    with Session(log) as s:
        s.start_turn("Add a flag.", mode="agent")
        s.todo_write({"todos": [{"content": "Ship it", "status": "pending"}]})
        for i in range(6):
            s.add_message({"role": "assistant", "content": f"Step {i}: edited cli.py " * 30})
        s.add_message({"role": "user", "content": "Go on."})
    return log


def key_echoes(kit: Kit, tally: Tally) -> None:
    """A server echoing the API key in base64 or another case: nothing shows or is stored."""
    alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789-_"
    for _ in range(kit.cases):
        key = "sk-" + "".join(kit.rng.choices(alphabet, k=kit.rng.randint(20, 48)))
        form = kit.rng.choice(("upper", "lower", "swapcase", "base64", "basic"))
        status = kit.rng.choice((200, 401))
        handler = type("Echo", (_Echo,), {"form": form, "status": status})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        log = _echo_log(kit)
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        try:
            done = kit.cli(tally, [
                "compact", log, "--force", "--retain", "0", "--json", "--summarizer", "openai",
                "--base-url", url, "--model", "m", "--api-key-env", "ATTACK_KEY",
                "--max-retries", "0", "--timeout", "20",
            ], env={"ATTACK_KEY": key})  # fmt: skip
        finally:
            server.shutdown()
            server.server_close()
        tally.cases += 1
        where = leaks(key, [done.stdout, done.stderr], log.parent)
        if where:
            tally.fail("leaks", f"{form} {status}: in {', '.join(where)}")


def compact_binary(kit: Kit, tally: Tally) -> None:
    """Random binary content given to `compact`: refused (exit 2), left byte-identical.

    A file whose first bytes hold no newline is "not a session log"; one that does is refused
    on its first line ("not JSON"); neither may say ``nothing_to_compact``.
    """
    said_count: dict[str, int] = {}
    for _ in range(kit.cases):
        path = kit.folder() / "blob.bin"
        size = kit.rng.randint(1, 20_000)
        data = bytes(kit.rng.getrandbits(8) for _ in range(size))
        if b"\n" not in data[:64] and kit.rng.random() < 0.3:
            data = b"\x00" * size
        path.write_bytes(data)
        done = kit.cli(tally, ["compact", path, "--force"])
        tally.cases += 1
        said = "not a session log" if "not a session log" in done.stderr else "line 1: not JSON"
        said_count[said] = said_count.get(said, 0) + 1
        if done.code != 2 or "nothing_to_compact" in done.stdout + done.stderr:
            tally.fail("wrong", f"{size} random bytes: exit {done.code} {done.stderr[-160:]!r}")
        check_bytes(tally, f"{size} bytes", data, path.read_bytes(), appended=False)
    tally.notes.append(
        ", ".join(f"{n} refused as {why!r}" for why, n in sorted(said_count.items()))
    )
