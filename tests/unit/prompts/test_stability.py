"""Prefix stability across modes, measured in tokens over a realistic tool catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction import get_tokenizer
from prompts import (
    BUILTIN_MODES,
    Environment,
    PrefixOrder,
    PromptBuilder,
    ToolCatalog,
    ToolStrategy,
    common_prefix_length,
    linearize,
    shared_prefix_tokens,
)

EXAMPLE_TOOLS = Path(__file__).resolve().parents[3] / "prompts" / "examples" / "coding_tools.json"
ENV = Environment(date="2026-11-30", cwd="/home/user/project", variables={"shell": "bash"})


ONE_LIST_MODES = ("agent", "parallel", "plan")
"""The modes of one agent's own list; team adds the task tools after todo_write."""


def coverage(
    strategy: ToolStrategy, order: PrefixOrder = "layout", modes: tuple[str, ...] = ONE_LIST_MODES
) -> dict[str, float]:
    """Return, per mode, the share of its catalog + system prompt tokens all `modes` share."""
    builder = PromptBuilder(
        ToolCatalog.from_file(EXAMPLE_TOOLS), strategy=strategy, environment=ENV
    )
    tokenizer = get_tokenizer()
    texts = {name: linearize(builder.layers(BUILTIN_MODES[name]), order=order) for name in modes}
    shared = shared_prefix_tokens(tokenizer, list(texts.values()))
    return {name: shared / tokenizer.count(text) for name, text in texts.items()}


class TestCommonPrefix:
    def test_stable_tools_share_at_least_90_percent(self) -> None:
        """With stable tools, agent, parallel and plan share >= 90% of catalog + system prompt."""
        figures = coverage("stable")
        assert min(figures.values()) >= 0.90, figures

    def test_team_extends_the_shared_prefix(self) -> None:
        """Team's catalog is agent's plus the task tools: adding team keeps the shared prefix."""
        with_team = coverage("stable", modes=(*ONE_LIST_MODES, "team"))
        without = coverage("stable")
        for name in ONE_LIST_MODES:
            assert with_team[name] == without[name], name
        builder = PromptBuilder(ToolCatalog.from_file(EXAMPLE_TOOLS), environment=ENV)
        agent, team = (builder.tools(BUILTIN_MODES[n]) for n in ("agent", "team"))
        assert team[: len(agent)] == agent
        assert [t.name for t in team[len(agent) :]] == ["task_create", "task_list", "task_update"]

    def test_filtered_tools_share_less(self) -> None:
        """Filtering todo_write out of plan's catalog costs agent and parallel their prefix."""
        stable, filtered = coverage("stable"), coverage("filtered")
        assert filtered["agent"] < stable["agent"]
        assert filtered["parallel"] < stable["parallel"]

    def test_agent_and_plan_share_core_and_catalog(self) -> None:
        """Under stable tools, agent and plan diverge only at the mode block."""
        builder = PromptBuilder(ToolCatalog.from_file(EXAMPLE_TOOLS), environment=ENV)
        agent, plan = (linearize(builder.layers(BUILTIN_MODES[n])) for n in ("agent", "plan"))
        head = agent[: agent.index("# Mode: Agent")]
        assert plan.startswith(head)
        assert len(head) > 0.85 * len(agent)

    @pytest.mark.parametrize(
        ("sequences", "expected"),
        [([], 0), ([[1, 2, 3]], 3), ([[1, 2, 3], [1, 2, 4]], 2), ([[1, 2], [1, 2, 3], [9]], 0)],
    )
    def test_common_prefix_length(self, sequences: list[list[int]], expected: int) -> None:
        """The shared prefix of token sequences is counted item by item."""
        assert common_prefix_length(sequences) == expected


class TestOneHome:
    def test_the_cache_models_use_the_one_common_prefix(self) -> None:
        """harness.simulation's common_prefix is prompts' routine, not a copy."""
        import prompts
        from harness.simulation import common_prefix, pack

        assert common_prefix is prompts.common_prefix
        assert common_prefix(pack([5, 6, 7]), pack([5, 6, 8])) == 2
        assert len(pack([1])) == prompts.TOKEN_BYTES

    @pytest.mark.parametrize(
        ("a", "b", "expected"),
        [([], [], 0), ([1], [], 0), ([1, 2], [1, 2], 2), ([2**32 - 1, 0], [2**32 - 1, 1], 1)],
    )
    def test_common_prefix_counts_whole_tokens(
        self, a: list[int], b: list[int], expected: int
    ) -> None:
        """Packed comparison counts tokens, not bytes, up to the largest 32-bit id."""
        from array import array

        import prompts

        packed_a, packed_b = array("I", a).tobytes(), array("I", b).tobytes()
        assert prompts.common_prefix(packed_a, packed_b) == expected
        assert prompts.common_prefix_length([a, b]) == expected
