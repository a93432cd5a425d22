"""`harness hooks install|uninstall|status|run|log|audit`: hooks for Claude Code, Codex, Gemini."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from harness.plain import HelpFormatter, examples, print_json

AGENT_NAMES = ("claude-code", "codex", "gemini")
"""The agents (`harness.hooks.NAMES`, repeated so ``--help`` does not import the package)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `hooks` command and its actions."""
    p = sub.add_parser(
        "hooks",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness hooks install claude-code",
            "harness hooks install codex --user --dry-run",
            "harness hooks audit ~/.claude/projects/-my-repo/SESSION.jsonl",
        ),
        help="keep every open item through Claude Code's, Codex's and Gemini CLI's compaction",
        description=(
            "Install hooks into an agent's own settings so that, after the agent compacts, every "
            "open todo and task is back in its next request, verbatim, headed with what its "
            "summary kept. See docs/agents.md."
        ),
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in (("install", "add the hooks"), ("uninstall", "remove exactly them")):
        a = actions.add_parser(name, help=text, formatter_class=HelpFormatter)
        a.add_argument("agent", choices=AGENT_NAMES, metavar="AGENT", help=" | ".join(AGENT_NAMES))
        where = a.add_mutually_exclusive_group()
        where.add_argument(
            "--project", type=Path, metavar="DIR", help="a project (default: ., Codex: --user)"
        )
        where.add_argument(
            "--user", action="store_true", help="the user's settings (Codex: $CODEX_HOME)"
        )
        a.add_argument("--dry-run", action="store_true", help="print the change, write nothing")
        a.set_defaults(func=_install if name == "install" else _uninstall)
    s = actions.add_parser("status", help="where the hooks are installed")
    s.add_argument("--project", type=Path, default=Path(), metavar="DIR")
    s.set_defaults(func=_status)
    r = actions.add_parser("run", help="the entry the hooks call (hook JSON on stdin)")
    r.add_argument("agent", metavar="AGENT")
    r.set_defaults(func=_run)
    g = actions.add_parser("log", help="the hooks' receipts, per agent session")
    g.add_argument("--json", action="store_true")
    g.set_defaults(func=_log)
    u = actions.add_parser("audit", help="what each of an agent's compactions kept")
    u.add_argument("transcript", type=Path, metavar="TRANSCRIPT")
    u.add_argument("--format", default="auto", help="the transcript format (default: detected)")
    u.add_argument("--json", action="store_true")
    u.set_defaults(func=_audit)


def harness_argv() -> list[str]:
    """Return the absolute command that runs this harness (its script, else the interpreter)."""
    script = Path(sys.executable).parent / "harness"
    if script.is_file():
        return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "harness"]


def _target(args: argparse.Namespace, project_file: str | None) -> Path | None:
    """Return the project folder asked for (default: the current one), or None for the user's.

    An agent that reads no project hooks file (Codex CLI) defaults to the user's settings.
    """
    if args.user or (args.project is None and project_file is None):
        return None
    return (args.project or Path()).absolute()


def _install(args: argparse.Namespace) -> int:
    from harness import hooks

    entry = hooks.agent(args.agent)
    where = entry.settings_path(_target(args, entry.project_file))
    change = hooks.install(entry, where, harness_argv())
    return _report(change, args.dry_run, "installed")


def _uninstall(args: argparse.Namespace) -> int:
    from harness import hooks

    entry = hooks.agent(args.agent)
    change = hooks.uninstall(entry, entry.settings_path(_target(args, entry.project_file)))
    return _report(change, args.dry_run, "removed")


def _report(change: object, dry: bool, verb: str) -> int:
    from harness.hooks import Change, apply

    assert isinstance(change, Change)
    if not dry:
        apply(change)
    what = "would change" if dry else "changed"
    if not change.changed:
        print(f"{change.path}: nothing to change ({', '.join(change.kept) or 'no hooks'})")
        return 0
    print(f"{change.path}: {what}")
    if change.added or change.updated:
        print(f"  command: {change.command}")
    for label, events in (("added", change.added), ("updated", change.updated)):
        for event in events:
            print(f"  {label} hook {event}")
    for event in change.removed:
        print(f"  removed hook {event}")
    for event in change.kept:
        print(f"  kept hook {event} (already {verb})")
    return 0


def _status(args: argparse.Namespace) -> int:
    from harness import hooks

    for entry in hooks.AGENTS:
        for scope, where in (("user", None), ("project", args.project.absolute())):
            if where is not None and entry.project_file is None:
                continue
            path = entry.settings_path(where)
            commands = hooks.installed(entry, path)
            state = f"{len(commands)} hooks" if commands else "not installed"
            print(f"{entry.name:<12} {scope:<8} {path}: {state}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from harness.hooks import MAX_STDIN, needs_reading

    raw = sys.stdin.buffer.read(MAX_STDIN)
    if not needs_reading(args.agent, raw):
        return 0
    from harness.hooks import run

    return run(args.agent, io.BytesIO(raw), sys.stdout, sys.stderr)


def _log(args: argparse.Namespace) -> int:
    from harness.hooks import receipts

    rows = list(receipts())
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no receipts yet")
    for row in rows:
        head = (
            f"{row.get('time')} {row.get('agent')} session {row.get('session')} {row.get('event')}"
        )
        if row.get("role") == "before":
            print(f"{head}: {len(row.get('open', []))} open items before the compaction")
            continue
        dropped, restored = row.get("dropped", []), row.get("restored", [])
        print(
            f"{head}: the summary kept {row.get('kept')} of {len(restored)} open items; "
            f"dropped {len(dropped)}, restored {len(restored)}"
        )
        for line in dropped:
            print(f"  dropped, restored: {line}")
    return 0


def _audit(args: argparse.Namespace) -> int:
    from harness.hooks import audit, audit_json, audit_text

    data = audit_json(args.transcript, audit(args.transcript, args.format))
    if args.json:
        print_json(data)
    else:
        print(audit_text(data))
    return 0
