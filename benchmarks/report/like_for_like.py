"""The report's headline: B against each peer, like for like, the evaluation split first.

Read from the comparison rows (`benchmarks.report.comparison.compare`), per split
(`benchmarks.splits`: the evaluation split, sessions no default was chosen on, leads) and per kind
of session (generated and real, in separate rows), for each peer configuration at the matched
budget:

- **Like for like**: B with its model-written summary (``B:llm``) against the peer with its own,
  both summary calls priced: input tokens and cost per provider, pooled, with the per-session
  range.
- **B's extractive summarizer** (``B``) against the peer: input tokens, cost with the peer's
  summary calls priced, and without them ("summary calls not priced").

A session where a peer was scored on other calls than B (a different number of requests) is
flagged and left out of every pooled figure (`refused`); nothing is compared on unequal calls.

Invariants: every figure is read from the comparison rows; a row is only pooled with rows of the
same calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchmarks.replay.summary_pricing import SUMMARY_INPUT_PRICING
from benchmarks.splits import SPLITS, split_of

Row = Mapping[str, Any]
Value = Callable[[Row], float]
KINDS: tuple[str, ...] = ("generated", "real")


def kind_of(session: str) -> str:
    """Return ``generated`` or ``real`` for a session name."""
    return "real" if session.startswith("real-") else "generated"


def refused(comparison: Mapping[str, Any], ours: str = "B") -> dict[str, list[str]]:
    """Return, per session, the peer rows scored on other calls than `ours` (never compared)."""
    out: dict[str, list[str]] = {}
    for session, rows in comparison["sessions"].items():
        mine = next((r for r in rows if r["name"] == ours), None)
        if mine is None:
            continue
        calls = len(mine["prompt_tokens"])
        off = [r["name"] for r in rows if r["kind"] == "peer" and len(r["prompt_tokens"]) != calls]
        if off:
            out[session] = off
    return out


def pairs(
    comparison: Mapping[str, Any], ours: str, split: str, kind: str
) -> dict[str, list[tuple[str, Row, Row]]]:
    """Return, per matched peer configuration, its (session, ours, peer) rows on equal calls."""
    skip = refused(comparison, ours)
    out: dict[str, list[tuple[str, Row, Row]]] = {}
    for session, rows in comparison["sessions"].items():
        if split_of(session) != split or kind_of(session) != kind:
            continue
        mine = next((r for r in rows if r["name"] == ours), None)
        if mine is None:
            continue
        for r in rows:
            if r["kind"] == "peer" and r["matched"] and r["name"] not in skip.get(session, ()):
                out.setdefault(r["name"], []).append((session, mine, r))
    return out


def _less(ours: float, theirs: float) -> float:
    """Share by which `ours` is below `theirs` (positive: ours is less)."""
    return 1 - ours / theirs if theirs else 0.0


def figure(found: Sequence[tuple[str, Row, Row]], value: Value) -> str:
    """Pooled share B is below the peer, and the per-session range: ``12.3% (-1.0% to 20.0%)``."""
    pooled = _less(sum(value(b) for _, b, _ in found), sum(value(p) for _, _, p in found))
    each = [_less(value(b), value(p)) for _, b, p in found]
    return f"{pooled:+.1%} ({min(each):+.1%} to {max(each):+.1%})"


def _input(row: Row) -> float:
    return float(row["summed_input"])


def _cost(provider: str, key: str) -> Value:
    return lambda row: float(row[key][provider]["usd"])


def _table(
    comparison: Mapping[str, Any], ours: str, split: str, providers: Sequence[str], bare: bool
) -> list[str]:
    """Rows of one headline table: per kind of session, per peer configuration."""
    lines = []
    for kind in KINDS:
        for peer, found in pairs(comparison, ours, split, kind).items():
            cells = [kind, peer, str(len(found)), figure(found, _input)]
            cells += [figure(found, _cost(p, "cost")) for p in providers]
            if bare:
                cells += [figure(found, _cost(p, "cost_without_summaries")) for p in providers]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def section(comparison: Mapping[str, Any], providers: Sequence[str]) -> list[str]:
    """Return the headline's Markdown: both tables per split, the evaluation split first."""
    if not any(r["kind"] == "peer" for rows in comparison["sessions"].values() for r in rows):
        return []
    out = [
        "## Headline: B against each peer (evaluation split first)",
        "",
        "Each cell: how much less B sends or pays than the peer, pooled over the sessions "
        "(positive: B is less), and in brackets the range per session. Generated and real "
        f"sessions in separate rows. Pricing: {SUMMARY_INPUT_PRICING}.",
        "",
    ]
    for split in SPLITS:
        out += _split_tables(comparison, split, providers)
    flagged = refused(comparison)
    if flagged:
        out += ["Refused (a peer scored on other calls than B; left out of every figure):", ""]
        out += [
            f"- `{s}`: {len(names)} peer configurations ({_listed(names)})"
            for s, names in flagged.items()
        ]
        out.append("")
    return out


def _split_tables(comparison: Mapping[str, Any], split: str, providers: Sequence[str]) -> list[str]:
    """Return the like-for-like table and B's extractive table of one split."""
    title = "sessions no default was chosen on" if split == "evaluation" else "B's defaults chosen"
    priced = [f"cost {p}, summary calls priced" for p in providers]
    head = ["sessions", "peer", "n", "input tokens", *priced]
    like = _table(comparison, "B:llm", split, providers, bare=False)
    extractive = _table(comparison, "B", split, providers, bare=True)
    out = [f"### {split.capitalize()} split ({title})", ""]
    if like:
        out += [
            "Like for like: B with its model-written summary (`B:llm`) against each peer with "
            "its own, both summary calls priced.",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
            *like,
            "",
        ]
    if extractive:
        bare = [f"cost {p}, summary calls not priced" for p in providers]
        out += [
            "B with its extractive summarizer (no summary call) against each peer: the peer's "
            "summary calls priced, and not priced.",
            "",
            "| " + " | ".join([*head, *bare]) + " |",
            "|" + "---|" * (len(head) + len(bare)),
            *extractive,
            "",
        ]
    return out


def _listed(names: Sequence[str], most: int = 3) -> str:
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown} and {len(names) - most} more"
