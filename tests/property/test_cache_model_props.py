from __future__ import annotations

from hypothesis import given
from strategies import token_request_lists

from harness.simulation import AnthropicCache, DeepSeekCache, OpenAICache, common_prefix, pack
from harness.simulation._cache_models import VLLMCache, replay_hits

SMALL_MODELS = (
    DeepSeekCache(unit=4),
    OpenAICache(minimum=8, step=4),
    AnthropicCache(min_tokens=3),
    VLLMCache(block_size=4),
)


@given(token_request_lists())
def test_hits_bounded_by_the_longest_shared_prefix(requests):
    """No model serves more than the request, nor beyond its longest prefix shared earlier."""
    packed = [pack(r) for r in requests]
    for model in SMALL_MODELS:
        hits = replay_hits(model, packed)
        assert hits[0] == 0
        for i, hit in enumerate(hits):
            best = max((common_prefix(packed[i], packed[j]) for j in range(i)), default=0)
            assert 0 <= hit <= min(best, len(requests[i]))


@given(token_request_lists())
def test_block_models_serve_whole_blocks_of_the_shared_prefix(requests):
    """DeepSeek and vLLM hit the shared prefix rounded down to a block, minus vLLM's last token."""
    packed = [pack(r) for r in requests]
    ds = replay_hits(DeepSeekCache(unit=4), packed)
    vl = replay_hits(VLLMCache(block_size=4), packed)
    for i in range(1, len(requests)):
        best = max(
            min(common_prefix(packed[i], packed[j]), len(requests[j]) // 4 * 4) for j in range(i)
        )
        assert ds[i] == best // 4 * 4
        assert vl[i] == min(best // 4 * 4, max(len(requests[i]) - 1, 0) // 4 * 4)
