"""The report's headline table: per session and provider, where B is cheaper and where it is not.

For each session of the comparison (`benchmarks.report.comparison.compare`: the generated sessions
and the real transcripts) and each provider, B's cost (summary calls priced,
`benchmarks.replay.summary_pricing`) is set against the cheapest other design at the matched budget:
the cheapest peer configuration where a peer ran the session, else the cheapest of our other
runs. One line says why, from the
largest of three parts of the difference: the session's requests (input tokens, split into the
fixed prompt and the messages), the cache (the share of input a provider served from cache), and
the summary calls (how many, and what they cost).

Invariants: every figure is read from the comparison rows; nothing is estimated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

OURS = "B"
OTHER_DESIGNS = ("A", "C", "A:blind")
"""Our runs that are other designs (not B's variants): the rivals where no peer ran."""


def _rival(rows: Sequence[Mapping[str, Any]], provider: str) -> Mapping[str, Any] | None:
    """Return the cheapest matched peer row, else the cheapest of our other runs."""
    matched = [r for r in rows if r["matched"] and r["name"] != OURS]
    peers = [r for r in matched if r["kind"] == "peer"]
    pool = peers or [r for r in matched if r["name"] in OTHER_DESIGNS]
    return min(pool, key=lambda r: (r["cost"][provider]["usd"], r["name"]), default=None)


def _hit_share(row: Mapping[str, Any], provider: str) -> float:
    cost = row["cost_without_summaries"][provider]
    total = cost["miss"] + cost["hit"] + cost["write"]
    return cost["hit"] / total if total else 0.0


def why(ours: Mapping[str, Any], rival: Mapping[str, Any], provider: str) -> str:
    """Say in one line what makes the difference between B's cost and the rival's."""
    request_delta = (
        ours["cost_without_summaries"][provider]["usd"]
        - rival["cost_without_summaries"][provider]["usd"]
    )
    summary_delta = (
        ours["cost"][provider]["usd"] - ours["cost_without_summaries"][provider]["usd"]
    ) - (rival["cost"][provider]["usd"] - rival["cost_without_summaries"][provider]["usd"])
    tokens = ours["summed_input"] - rival["summed_input"]
    parts = (
        f"input {tokens:+,} tokens (fixed prompt {ours['fixed'] - rival['fixed']:+,}, messages "
        f"{ours['messages'] - rival['messages']:+,}), cache hit {_hit_share(ours, provider):.0%} "
        f"against {_hit_share(rival, provider):.0%}"
    )
    calls = f"{ours['summary_calls']} summary calls against {rival['summary_calls']}"
    if abs(summary_delta) > abs(request_delta):
        lead = "summary calls decide it" if summary_delta else "the same cost"
        return (
            f"{lead}: {calls} ({summary_delta:+.4f} USD); requests {request_delta:+.4f} USD: "
            f"{parts}"
        )
    if round(request_delta, 6) == 0 and round(summary_delta, 6) == 0:
        return f"the same requests and summary calls: {parts}; {calls}"
    lead = "B's requests cost less" if request_delta < 0 else "B's requests cost more"
    return f"{lead} ({request_delta:+.4f} USD): {parts}; {calls} ({summary_delta:+.4f} USD)"


def rows(comparison: Mapping[str, Any], providers: Sequence[str]) -> list[dict[str, Any]]:
    """Return one entry per (session, provider) where B and a rival ran."""
    out = []
    for session, table in comparison["sessions"].items():
        ours = next((r for r in table if r["name"] == OURS), None)
        if ours is None:
            continue
        for provider in providers:
            rival = _rival(table, provider)
            if rival is None:
                continue
            b, r = ours["cost"][provider]["usd"], rival["cost"][provider]["usd"]
            out.append(
                {
                    "session": session,
                    "provider": provider,
                    "ours_usd": b,
                    "rival": rival["name"],
                    "rival_kind": rival["kind"],
                    "rival_usd": r,
                    "cheaper": round(b, 6) < round(r, 6),
                    "same": round(b, 6) == round(r, 6),
                    "delta": (b - r) / r if r else 0.0,
                    "why": why(ours, rival, provider),
                }
            )
    return out


def section(comparison: Mapping[str, Any], providers: Sequence[str]) -> list[str]:
    """Return the Markdown lines of the headline table."""
    entries = rows(comparison, providers)
    if not entries:
        return []
    out = [
        "### Where B is cheaper, and where it is not",
        "",
        "Per session and provider: B's cost with every summary call priced (`summary_pricing`), "
        "against the cheapest peer configuration at the matched budget (the cheapest of our "
        "other runs where no peer ran the session); *B vs it*: B's cost over the rival's, minus "
        "one; *why*: the larger of the difference in the session's own requests and in the "
        "summary calls, with the input and cache figures behind it.",
        "",
        "| session | provider | B USD | cheapest rival | rival USD | B vs it | why |",
        "|---|---|--:|---|--:|--:|---|",
    ]
    for e in entries:
        mark = "same" if e["same"] else "cheaper" if e["cheaper"] else "dearer"
        out.append(
            f"| `{e['session']}` | {e['provider']} | {e['ours_usd']:.3f} | {e['rival']} | "
            f"{e['rival_usd']:.3f} | {e['delta']:+.1%} ({mark}) | {e['why']} |"
        )
    cheaper = sum(e["cheaper"] for e in entries)
    same = sum(e["same"] for e in entries)
    out += [
        "",
        f"B is the cheaper in {cheaper} of {len(entries)} (session, provider) pairs, the same in "
        f"{same}, dearer in {len(entries) - cheaper - same}.",
        "",
    ]
    return out
