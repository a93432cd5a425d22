"""The headline: like for like first, the evaluation split first, unequal calls refused."""

from __future__ import annotations

from typing import Any

from benchmarks.report import like_for_like

PROVIDERS = ("openai",)


def row(
    name: str, kind: str, tokens: int, usd: float, bare: float, calls: int = 3
) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "matched": True,
        "summed_input": tokens,
        "prompt_tokens": [tokens // calls] * calls,
        "cost": {"openai": {"usd": usd}},
        "cost_without_summaries": {"openai": {"usd": bare}},
    }


def session(peer_tokens: int, peer_calls: int = 3) -> list[dict[str, Any]]:
    return [
        row("B", "strategy", 800, 8.0, 8.0),
        row("B:llm", "strategy", 900, 9.5, 9.0),
        row("lc", "peer", peer_tokens, 12.0, 9.6, peer_calls),
    ]


COMPARISON = {
    "sessions": {
        "synthetic-t12-s3": session(1_000),  # evaluation, generated
        "synthetic-t12-s4": session(500),  # evaluation, generated: the peer sends fewer
        "real-x": session(1_000, peer_calls=4),  # evaluation, real: other calls, refused
        "synthetic-t12-s0": session(1_000),  # tuning
    }
}


class TestRefused:
    def test_unequal_calls_are_flagged(self):
        """A peer scored on another number of calls than B is named for that session."""
        assert like_for_like.refused(COMPARISON) == {"real-x": ["lc"]}

    def test_refused_rows_are_never_pooled(self):
        """The refused session is in no table; the report lists it."""
        text = "\n".join(like_for_like.section(COMPARISON, PROVIDERS))
        assert not any(line.startswith("| real |") for line in text.splitlines())
        assert "- `real-x`: 1 peer configurations (lc)" in text


class TestTables:
    def test_evaluation_split_leads(self):
        """The evaluation split's tables come before the tuning split's."""
        text = "\n".join(like_for_like.section(COMPARISON, PROVIDERS))
        assert text.index("### Evaluation split") < text.index("### Tuning split")

    def test_pooled_share_and_per_session_range(self):
        """Input: pooled 1 - 1600/1500, per session -60% (s4) to +20% (s3)."""
        found = like_for_like.pairs(COMPARISON, "B", "evaluation", "generated")["lc"]
        assert [s for s, _, _ in found] == ["synthetic-t12-s3", "synthetic-t12-s4"]
        text = like_for_like.figure(found, lambda r: float(r["summed_input"]))
        assert text == "-6.7% (-60.0% to +20.0%)"

    def test_both_cost_figures_labelled(self):
        """B's extractive table gives the cost with and without the peer's summary calls."""
        lines = like_for_like.section(COMPARISON, PROVIDERS)
        heads = [line for line in lines if line.startswith("| sessions")]
        assert "cost openai, summary calls priced" in heads[0]  # like for like
        assert "summary calls not priced" not in heads[0]
        assert "cost openai, summary calls not priced" in heads[1]
        body = [line for line in lines if line.startswith("| generated | lc |")]
        # like for like: B:llm 9.5+9.5 against 12+12; extractive, not priced: 16 against 19.2
        assert body[0].split(" | ")[4] == "+20.8% (+20.8% to +20.8%) |"
        assert body[1].split(" | ")[5] == "+16.7% (+16.7% to +16.7%) |"

    def test_no_peer_no_headline(self):
        """Without a peer row there is nothing to compare."""
        only_ours = {"sessions": {"synthetic-t12-s3": session(1_000)[:2]}}
        assert like_for_like.section(only_ours, PROVIDERS) == []
