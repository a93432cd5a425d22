"""Checkpoint probes, written apart from the code they check: their own parser, their own oracle.

Nothing here imports the Checkpoint parser, the summarizers or their helpers: the rendered text
is split by its ``## `` headings and its task lines read with a regex written from the format's
description (`read_checkpoint`), and what should be there is read from the log the plain way
(`LogSoFar`: the latest todo list, the shared tasks folded by id, the recorded working
directory, the tool messages' recorded status). Tasks are matched by id and subject, todo items
by their text, never by "shares a word".

Probes (a probe that does not apply to a compaction returns no verdict and is not counted):

- ``first_request`` / ``latest_request``: the first and the latest request a person typed are
  there (their head), in the Checkpoint or the messages kept after it (an earlier recorded
  summary of another agent may stand for the first);
- ``no_injected_request``: no text of another origin is given as a request or a constraint;
- ``no_shell_or_hook_request``: no shell escape (``<bash-input>``, ``<bash-stdout>``) and no
  "Operation stopped by hook" notice is, judged by the text itself;
- ``slash_args_request``: when the latest request was a slash command with arguments, the
  arguments are in Primary Request and Intent (or kept);
- ``next_step_consistent``: Next Step asks nothing, and claims nothing done while work is open;
- ``next_step_names_current``: with work in progress, Next Step names it: a task by ``task ID``
  or its subject's head, a todo item by its head or half of its words;
- ``next_step_no_completed``: Next Step names no completed task (by id) or todo item (by head);
- ``next_step_clean_cut``: a clipped Next Step ends at a sentence or clause end, or a whole word;
- ``tasks_carried``: every unfinished shared task is a task line of its section, with its id,
  owner, subject and open blockers;
- ``latest_error``: the latest error line of the span's commands is in Errors and Fixes (or kept);
- ``status_error``: the latest command the transcript marked failed is in Errors and Fixes;
- ``edited_files``: every edited file's name is in Files and Code (or kept);
- ``files_relative_to_cwd``: with a recorded working directory, every edited file under it is
  an exact entry relative to it, and one outside it keeps its absolute (or ``~``) path;
- ``concepts_project_first``: names common to every project (``fmt.Errorf``, ``t.Fatalf``...)
  never outnumber the project's own in Key Technical Concepts;
- ``no_ended_constraint``: no constraint typed in Plan mode survives the end of Plan mode;
- ``plan_carried``: with an approved plan (``plan/approve``), its headings and numbered steps
  stand verbatim, in order, in the plan block of Current Work (``  | `` lines);
- ``jobs_carried``: every job started and not ended (``job/start`` without its ``job/end``) is
  a ``- job ID (`` line of Current Work, and no other job is.

Invariants: deterministic; pure functions of the log and the compaction's text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from benchmarks.quality.probe_reading import (
    Compaction,
    LogSoFar,
    ReadCheckpoint,
    head,
    norm,
    read_checkpoint,
    typed,
    unescape,
)

PROBES: tuple[str, ...] = (
    "first_request",
    "latest_request",
    "no_injected_request",
    "no_shell_or_hook_request",
    "slash_args_request",
    "next_step_consistent",
    "next_step_names_current",
    "next_step_no_completed",
    "next_step_clean_cut",
    "tasks_carried",
    "latest_error",
    "status_error",
    "edited_files",
    "files_relative_to_cwd",
    "concepts_project_first",
    "no_ended_constraint",
    "plan_carried",
    "jobs_carried",
)
_PLAN_STRUCTURE = re.compile(r"^ {0,3}(?:#{1,6}\s|\d{1,3}[.)](?:\s|$))")
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)")
_JOB_ID = re.compile(r"^- job (\S+) \(")
_FAIL = re.compile(r"(?:[Ee]rror|ERROR)(?:\[\w+\])?:|\bFAIL\b|FAILED|panic:|\.go:\d+:\d+: ")
_DONE = re.compile(
    r"\b(?:done|finished|ready for review|all tests pass|is green|complete[d]?)\b", re.I
)
_COMMAND = re.compile(r"^\s*<command-(?:name|message|args)>")
"""A slash command as Claude Code records it: what the person typed, wrapped by the agent."""
_CONSTRAINT = re.compile(r"\b(?:must|never|always|do not|don't|make sure)\b", re.I)
_EDIT_TOOLS = frozenset(
    {"edit", "write", "multiedit", "notebookedit", "edit_file", "write_file", "replace"}
)
_WORD = re.compile(r"[A-Za-z]{4,}")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (.+)$", re.M)
_SHELL_OR_HOOK = re.compile(r"^\s*(?:<bash-(?:input|stdout|stderr)>|\[?Operation stopped by hook)")
_SLASH = re.compile(r"^/[\w:.-]+ +(\S.*)$", re.S)
_CUT = re.compile(r"^(.*) \[… \d+ more characters\]$", re.S)
_COMMON_HEADS = ("fmt.", "t.", "os.", "strings.", "errors.", "json.", "console.", "require.")


# --- the probes ---------------------------------------------------------------------------------


def _requests(log: LogSoFar, c: Compaction, cp: ReadCheckpoint) -> dict[str, bool]:
    out: dict[str, bool] = {}
    seen = norm(unescape(c.text)) + "\n" + c.tail
    typed_ = [(s, m) for s, m in log.messages() if typed(m) and m.text().strip()]
    if typed_:
        first_seq, first = typed_[0]
        foreign = [f for f in log.foreign_checkpoints() if f.last_seq >= first_seq]
        quoted = "Earlier summary (" in cp.sections.get("Primary Request and Intent", "")
        out["first_request"] = head(first.text()) in seen or (bool(foreign) and quoted)
        out["latest_request"] = head(typed_[-1][1].text()) in seen
    asked = norm(cp.sections.get("Primary Request and Intent", "")) + "\n"
    asked += norm(cp.sections.get("Critical Context", ""))
    others = [m.text() for _, m in log.messages() if m.role == "user" and not typed(m)]
    heads = [head(t, 40) for t in others if len(norm(t)) >= 20]
    if heads:
        out["no_injected_request"] = not any(h in asked for h in heads)
    users = [m.text() for _, m in log.messages() if m.role == "user"]
    shells = [head(t, 40) for t in users if _SHELL_OR_HOOK.match(t) and len(norm(t)) >= 20]
    if shells:
        out["no_shell_or_hook_request"] = not any(h in asked for h in shells)
    acted = [m.text() for _, m in log.messages() if typed(m) or _COMMAND.match(m.text())]
    slash = _SLASH.match(acted[-1].strip()) if acted else None
    if slash is not None:
        out["slash_args_request"] = head(slash.group(1), 30) in asked + "\n" + c.tail
    return out


def _open_texts(log: LogSoFar) -> list[str]:
    """The open items' own text: unfinished todos and the subjects of unfinished tasks."""
    todos = [c for c, s in log.latest_todos() if s != "completed"]
    tasks = [
        str(t["subject"])
        for t in log.board().values()
        if t["status"] in ("pending", "in_progress") and t.get("subject")
    ]
    return sorted({*todos, *tasks}, key=len, reverse=True)


def _claims_done(step: str, open_texts: Sequence[str]) -> bool:
    """Tell whether Next Step claims work done, once the open items' own text is taken out.

    An item named "Mark tests done/partial/open" says "done" itself; that is no claim.
    """
    flat = norm(step)
    for text in open_texts:
        flat = flat.replace(norm(text), " ")
    return _DONE.search(flat) is not None


def _open_work(log: LogSoFar, agent: str) -> tuple[str | None, list[str], bool]:
    """What is in progress (how Next Step must name it), the completed names, anything open."""
    todos = log.latest_todos()
    board = [t for t in log.board().values() if t["status"] != "deleted"]
    done = [c for c, s in todos if s == "completed"] + [
        f"task {t['id']}" for t in board if t["status"] == "completed"
    ]
    anything_open = any(s != "completed" for _, s in todos) or any(
        t["status"] in ("pending", "in_progress") for t in board
    )
    running = [c for c, s in todos if s == "in_progress"]
    if running:
        return running[0], done, anything_open
    tasks = [t for t in board if t["status"] == "in_progress"]
    tasks = [t for t in tasks if t["owner"] == agent] or tasks
    if tasks:
        return f"task {tasks[0]['id']}\x00{tasks[0]['subject']}", done, anything_open
    return None, done, anything_open


def _names(step: str, target: str) -> bool:
    flat = norm(step).casefold()
    if "\x00" in target:
        task_id, subject = target.split("\x00", 1)
        number = task_id.removeprefix("task ")
        by_id = re.search(rf"(?:\btask\s*#?|#){re.escape(number)}(?![\w-])", flat) is not None
        return by_id or head(subject, 30).casefold() in flat
    words = {w.lower() for w in _WORD.findall(target)}
    said = {w.lower() for w in _WORD.findall(step)}
    return head(target, 30).casefold() in flat or (
        bool(words) and 2 * len(words & said) >= len(words)
    )


def _next_step(log: LogSoFar, c: Compaction, cp: ReadCheckpoint) -> dict[str, bool]:
    step = cp.sections.get("Next Step", "")
    current, done, anything_open = _open_work(log, c.agent)
    lines = [ln.strip().rstrip("*_)\"' ") for ln in step.split("\n")]
    out = {
        "next_step_consistent": not any(ln.endswith("?") for ln in lines)
        and not (anything_open and _claims_done(step, _open_texts(log)))
    }
    if current is not None:
        out["next_step_names_current"] = _names(step, current)
    if done:
        flat = norm(step).casefold()
        named = []
        for name in done:
            if name.startswith("task "):
                number = re.escape(name[5:])
                named.append(re.search(rf"(?:\btask\s*#?){number}(?![\w-])", flat) is not None)
            elif len(name) >= 12:
                named.append(head(name, 40).casefold() in flat)
        out["next_step_no_completed"] = not any(named)
    cut = _CUT.match(step)
    if cut is not None:
        kept = cut.group(1).rstrip()
        said = "\n".join(m.text() for _, m in log.messages() if m.role == "assistant")
        whole = re.search(re.escape(kept[-30:]) + r"(?=\s|$)", said) is not None
        out["next_step_clean_cut"] = kept[-1:] in ".!?;:,)]" or whole
    return out


def _tasks(log: LogSoFar, c: Compaction, cp: ReadCheckpoint) -> dict[str, bool]:
    board = log.board()
    open_ids = {i for i, t in board.items() if t["status"] in ("pending", "in_progress")}
    if not open_ids:
        return {}
    expected: dict[str, list[tuple[str, str | None, str, tuple[str, ...]]]] = {
        "Pending Jobs": [],
        "Current Work": [],
    }
    for i, t in board.items():
        if i in open_ids:
            section = "Pending Jobs" if t["status"] == "pending" else "Current Work"
            blockers = tuple(b for b in t["blocked_by"] if b in open_ids)
            expected[section].append((i, t["owner"], t["subject"], blockers))
    return {"tasks_carried": expected == cp.tasks}


def _errors(log: LogSoFar, c: Compaction, cp: ReadCheckpoint) -> dict[str, bool]:
    out: dict[str, bool] = {}
    commands: dict[str, str] = {}
    latest: str | None = None
    failed: str | None = None
    for _, message in log.messages(c.first_seq, c.last_seq):
        for call in message.tool_calls or ():
            try:
                args = json.loads(call.function.arguments)
            except ValueError:
                continue
            command = args.get("command") or args.get("cmd") if isinstance(args, dict) else None
            if isinstance(command, list):
                command = " ".join(str(v) for v in command)
            if isinstance(command, str) and command.strip():
                commands[call.id] = command.strip().split("\n", 1)[0]
        if message.role == "tool" and message.tool_call_id in commands:
            lines = [ln.strip() for ln in message.text().split("\n")]
            bad = [ln for ln in lines if _FAIL.search(ln) and not ln.startswith(("raise", "#"))]
            if bad:
                latest = head(bad[0], 40)
            if message.failed:
                failed = head(commands[message.tool_call_id], 40)
    errors = norm(cp.sections.get("Errors and Fixes", ""))
    if latest is not None:
        out["latest_error"] = latest in errors or latest in c.tail
    if failed is not None:
        out["status_error"] = failed in errors or failed in c.tail
    return out


def _edits(log: LogSoFar, c: Compaction) -> list[str]:
    paths: list[str] = []
    for _, message in log.messages(c.first_seq, c.last_seq):
        for call in message.tool_calls or ():
            if call.function.name.lower() not in _EDIT_TOOLS | {"apply_patch"}:
                continue
            try:
                args = json.loads(call.function.arguments)
            except ValueError:
                continue
            if isinstance(args, dict):
                found = [args.get(k) for k in ("file_path", "path", "notebook_path")]
                found += _PATCH_FILE.findall(str(args.get("input", "")))
                paths += [p.strip() for p in found if isinstance(p, str) and p.strip()]
    return paths


def _files(log: LogSoFar, c: Compaction, cp: ReadCheckpoint) -> dict[str, bool]:
    edited = _edits(log, c)
    if not edited:
        return {}
    files = cp.sections.get("Files and Code", "")
    both = files + "\n" + c.tail
    out = {"edited_files": all(p.rsplit("/", 1)[-1] in both for p in edited)}
    cwd = log.cwd_at(c.last_seq)
    if cwd:
        entries = {
            ln[len("- edited `") : -1] for ln in files.split("\n") if ln.startswith("- edited `")
        }
        home = re.match(r"^(?:/Users/[^/]+|/home/[^/]+|/root)", cwd)
        wanted = []
        for path in edited:
            if path.startswith(cwd.rstrip("/") + "/"):
                wanted.append(path[len(cwd.rstrip("/")) + 1 :])
            elif path.startswith("/") and home and path.startswith(home.group() + "/"):
                wanted.append("~" + path[len(home.group()) :])
            else:
                wanted.append(path.removeprefix("./"))
        out["files_relative_to_cwd"] = all(w in entries or w in c.tail for w in wanted)
    return out


def _concepts(log: LogSoFar, c: Compaction, cp: ReadCheckpoint) -> dict[str, bool]:
    names = re.findall(r"^- `(.+)`$", cp.sections.get("Key Technical Concepts", ""), re.M)
    if not names:
        return {}
    common = sum(1 for n in names if n.startswith(_COMMON_HEADS) or n.startswith("self.assert"))
    return {"concepts_project_first": common <= len(names) - common}


def _constraints(log: LogSoFar, c: Compaction, cp: ReadCheckpoint) -> dict[str, bool]:
    upto = c.last_seq + len(c.kept)
    now = log.mode_at(upto)
    ended: list[str] = []
    for seq, message in log.messages(last=upto):
        if not typed(message) or log.mode_at(seq) != "plan":
            continue
        over = now != "plan" or any(m.origin == "mode_switch" for _, m in log.messages(seq, upto))
        if over:
            sentences = re.split(r"(?<=[.!?])\s+", norm(message.text()))
            ended += [head(s, 40) for s in sentences if _CONSTRAINT.search(s)]
    if not ended:
        return {}
    critical = norm(cp.sections.get("Critical Context", ""))
    return {"no_ended_constraint": not any(e in critical for e in ended)}


def _structure(text: str) -> list[str]:
    """Return a plan's headings and numbered steps (outside code fences), in order."""
    out, fenced = [], False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _PLAN_STRUCTURE.match(line):
            out.append(line)
    return out


_PLAN_ESCAPE = re.compile(r"\\(\\|u[0-9a-f]{4})")


def _plan_char(match: re.Match[str]) -> str:
    code = match[1]
    return "\\" if code == "\\" else chr(int(code[1:], 16))


def _plan_lines(lines: list[str]) -> list[str]:
    r"""Decode Current Work's plan lines (after ``  | ``; ``\\`` is one backslash)."""
    return [
        _PLAN_ESCAPE.sub(_plan_char, line[4:])
        for line in lines
        if line == "  |" or line.startswith("  | ")
    ]


def _carried_work(log: LogSoFar, c: Compaction, cp: ReadCheckpoint) -> dict[str, bool]:
    out: dict[str, bool] = {}
    current = cp.raw.get("Current Work", [])
    plan = log.approved_plan()
    if plan is not None:
        kept = iter(_plan_lines(current))
        out["plan_carried"] = all(step in kept for step in _structure(plan))
    running = log.running_jobs()
    listed = [m.group(1) for line in current if (m := _JOB_ID.match(line))]
    if running or listed:
        out["jobs_carried"] = listed == running
    return out


CHECKS = (
    _requests,
    _next_step,
    _tasks,
    _errors,
    _files,
    _concepts,
    _constraints,
    _carried_work,
)


def probe(log: LogSoFar, compaction: Compaction) -> dict[str, bool]:
    """Return each applicable probe's verdict for one compaction."""
    checkpoint = read_checkpoint(compaction.text)
    out: dict[str, bool] = {}
    for check in CHECKS:
        out.update(check(log, compaction, checkpoint))
    return out
