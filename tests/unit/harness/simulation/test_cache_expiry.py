from __future__ import annotations

import pytest

from harness.simulation import PROVIDER_MODELS, AnthropicCache, DeepSeekCache, OpenAICache
from harness.simulation._cache_models import VLLMCache, replay_hits


def seq(start: int, n: int) -> list[int]:
    return list(range(start, start + n))


class TestDefaults:
    def test_documented_lifetimes(self):
        """Anthropic and OpenAI keep 5 minutes, DeepSeek an hour, vLLM evicts by memory only."""
        assert AnthropicCache().ttl_seconds == 300
        assert OpenAICache().ttl_seconds == 300
        assert DeepSeekCache().ttl_seconds == 3600
        assert VLLMCache().ttl_seconds is None

    @pytest.mark.parametrize("bad", [0, -1, 0.0])
    def test_a_lifetime_must_be_positive(self, bad):
        """A zero or negative lifetime is refused at construction."""
        for cls in (AnthropicCache, OpenAICache, DeepSeekCache, VLLMCache):
            with pytest.raises(ValueError, match="ttl_seconds"):
                cls(ttl_seconds=bad)


class TestExpiry:
    @pytest.mark.parametrize("model", [m for m in PROVIDER_MODELS if m.ttl_seconds])
    def test_a_gap_past_the_lifetime_misses_and_one_inside_hits(self, model):
        """Exactly at the lifetime the prefix still hits; one second later it has expired."""
        ttl = model.ttl_seconds
        first, second = seq(0, 3000), seq(0, 3100)
        at_limit = replay_hits(model, [first, second], [(3000,), (3100,)], [0.0, ttl])
        past = replay_hits(model, [first, second], [(3000,), (3100,)], [0.0, ttl + 1])
        assert at_limit[1] > 0
        assert past == [0, 0]

    def test_without_a_clock_nothing_expires(self):
        """Requests without times hit as before, however far apart they would be."""
        model = AnthropicCache()
        hits = replay_hits(model, [seq(0, 2000), seq(0, 2100)], [(2000,), (2100,)])
        assert hits == [0, 2000]

    def test_a_hit_refreshes_the_entry(self):
        """Three calls four minutes apart: each read keeps the prefix alive (Anthropic)."""
        model = AnthropicCache()
        reqs = [seq(0, 2000), seq(0, 2000), seq(0, 2000)]
        hits = replay_hits(model, reqs, [(2000,)] * 3, [0.0, 240.0, 480.0])
        assert hits == [0, 2000, 2000]

    def test_block_models_refresh_on_use(self):
        """DeepSeek: a prefix used at 50 minutes is still alive at 100 minutes."""
        model = DeepSeekCache(unit=64)
        reqs = [seq(0, 640), seq(0, 640), seq(0, 640)]
        assert replay_hits(model, reqs, None, [0.0, 3000.0, 6000.0]) == [0, 640, 640]
        assert replay_hits(model, reqs[::2], None, [0.0, 6000.0]) == [0, 0]

    def test_an_old_branch_expires_while_the_shared_prefix_lives(self):
        """Only the blocks a later request used are refreshed: the old tail expires alone."""
        model = DeepSeekCache(unit=64, ttl_seconds=300)
        base, long_tail, other = seq(0, 640), seq(10_000, 640), seq(20_000, 64)
        reqs = [[*base, *long_tail], [*base, *other], [*base, *long_tail]]
        hits = replay_hits(model, reqs, None, [0.0, 200.0, 400.0])
        assert hits == [0, 640, 640]  # the base was refreshed at 200 s; the old tail was not
