from __future__ import annotations

import json

import pytest

from compaction import ConfigError
from harness.simulation import default_prices, session_cost
from harness.simulation._pricing import PRICES_PATH, Price, load_prices

ANTHROPIC = Price("anthropic", "m", "t", 5.0, 0.5, 6.25, 25.0, "anthropic", "https://x")
DEEPSEEK = Price("deepseek", "m", "t", 0.3, 0.006, 0.3, 1.2, "deepseek", "https://x")


class TestTable:
    def test_committed_table_has_every_provider_with_source_and_date(self):
        """DeepSeek, OpenAI and Anthropic are priced, each with its source page; the date is set."""
        table = default_prices()
        assert set(table.providers) == {"deepseek", "openai", "anthropic"}
        assert table.taken == "2026-11-30"
        for price in table.providers.values():
            assert price.source.startswith("https://")
            assert price.cache_hit < price.input_miss <= price.cache_write
            assert price.output > price.input_miss
        assert {p.cache_model for p in table.providers.values()} == {
            "deepseek",
            "openai",
            "anthropic",
        }

    def test_only_anthropic_bills_writes_apart(self):
        """A write costs a miss at DeepSeek and OpenAI; Anthropic charges 1.25x for 5 minutes."""
        table = default_prices()
        assert [n for n, p in table.providers.items() if p.writes] == ["anthropic"]
        anthropic = table.providers["anthropic"]
        assert anthropic.cache_write == pytest.approx(1.25 * anthropic.input_miss)

    @pytest.mark.parametrize(
        ("edit", "match"),
        [
            (lambda d: d.update(format="x"), "not a context-harness/prices file"),
            (lambda d: d["providers"]["openai"].update(output=-1), "'output' must be"),
            (lambda d: d["providers"]["openai"].pop("cache_hit"), "'cache_hit' must be"),
            (lambda d: d["providers"]["openai"].update(source=""), "'source'"),
            (lambda d: d.update(providers={}), "non-empty"),
        ],
    )
    def test_a_bad_table_names_the_file_and_field(self, tmp_path, edit, match):
        """Every broken table is refused with the file and the field in the message."""
        doc = json.loads(PRICES_PATH.read_text(encoding="utf-8"))
        edit(doc)
        path = tmp_path / "prices.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        with pytest.raises(ConfigError, match=match) as info:
            load_prices(path)
        assert str(path) in str(info.value)


class TestSessionCost:
    def test_hits_misses_and_output(self):
        """DeepSeek: uncached tokens are misses; the sum is priced per million."""
        cost = session_cost(DEEPSEEK, [2000, 3000], [0, 1984], 100)
        assert (cost.miss, cost.hit, cost.write, cost.output) == (3016, 1984, 0, 100)
        expected = (3016 * 0.3 + 1984 * 0.006 + 100 * 1.2) / 1_000_000
        assert cost.usd == pytest.approx(expected)

    def test_anthropic_writes_what_it_did_not_read(self):
        """Anthropic: a cacheable request writes what it did not read; a short one misses."""
        cost = session_cost(ANTHROPIC, [1000, 2000, 2100], [0, 0, 2000], 0, write_min=1024)
        assert (cost.miss, cost.write, cost.hit) == (1000, 2100, 2000)
        assert cost.usd == pytest.approx((1000 * 5 + 2100 * 6.25 + 2000 * 0.5) / 1_000_000)

    def test_exactly_at_the_write_minimum_writes(self):
        """A request of exactly the minimum is cached (written), one token less is not."""
        assert session_cost(ANTHROPIC, [1024], [0], 0, write_min=1024).write == 1024
        assert session_cost(ANTHROPIC, [1023], [0], 0, write_min=1024).write == 0

    def test_every_input_token_in_one_class(self):
        """Misses, hits and writes add up to the summed input."""
        prompts, hits = [5000, 6000, 7000], [0, 4992, 5504]
        for price in (ANTHROPIC, DEEPSEEK):
            c = session_cost(price, prompts, hits, 10)
            assert c.miss + c.hit + c.write == sum(prompts)

    @pytest.mark.parametrize(
        ("prompts", "hits", "match"),
        [([10], [11], "a hit of 11"), ([10], [-1], "a hit of -1"), ([10, 10], [0], "2 requests")],
    )
    def test_inconsistent_series_raise(self, prompts, hits, match):
        """A hit above its request, a negative hit or mismatched lengths are refused."""
        with pytest.raises(ValueError, match=match):
            session_cost(DEEPSEEK, prompts, hits, 0)
