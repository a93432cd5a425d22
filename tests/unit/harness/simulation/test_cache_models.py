from __future__ import annotations

import pytest

from harness.simulation import (
    PROVIDER_MODELS,
    AnthropicCache,
    CacheModel,
    DeepSeekCache,
    OpenAICache,
    common_prefix,
    pack,
)
from harness.simulation._cache_models import VLLMCache, replay_hits


def seq(start: int, n: int) -> list[int]:
    return list(range(start, start + n))


class TestPacking:
    def test_common_prefix_in_tokens(self):
        """The common prefix is counted in tokens, not bytes."""
        assert common_prefix(pack([1, 2, 3, 4]), pack([1, 2, 9, 4])) == 2
        assert common_prefix(pack([1, 2]), pack([1, 2, 3])) == 2
        assert common_prefix(pack([]), pack([1])) == 0

    def test_packed_and_lists_agree(self):
        """A model gives the same hits for packed bytes and for lists of ints."""
        reqs = [seq(0, 100), seq(0, 150), [*seq(0, 70), *seq(900, 40)]]
        for model in PROVIDER_MODELS:
            assert replay_hits(model, reqs) == replay_hits(model, [pack(r) for r in reqs])


class TestDeepSeek:
    def test_whole_units_of_the_common_prefix(self):
        """A request hits the whole units of its prefix shared with an earlier one."""
        first = seq(1, 10)  # units [1..4] [5..8] cached, 2 tokens left over
        hits = replay_hits(DeepSeekCache(unit=4), [first, [*first, 11, 12], [1, 2, 3, 99, 5]])
        assert hits == [0, 8, 0]

    def test_divergence_inside_a_unit(self):
        """A change inside the second unit keeps only the first unit."""
        hits = replay_hits(DeepSeekCache(unit=4), [seq(1, 12), [1, 2, 3, 4, 5, 77, 7, 8, 9]])
        assert hits == [0, 4]

    def test_default_unit_is_64(self):
        """With the default unit, a 200-token repeat hits 192 tokens."""
        assert replay_hits(DeepSeekCache(), [seq(0, 200), seq(0, 260)]) == [0, 192]

    def test_any_earlier_request_counts(self):
        """A prefix cached two requests back still hits after an unrelated request."""
        hits = replay_hits(DeepSeekCache(unit=4), [seq(0, 16), seq(500, 16), seq(0, 20)])
        assert hits == [0, 0, 16]


class TestOpenAI:
    def test_nothing_under_the_minimum(self):
        """A repeated prefix shorter than 1,024 tokens never hits."""
        assert replay_hits(OpenAICache(), [seq(0, 1000), seq(0, 1100)]) == [0, 0]

    def test_steps_of_128_above_the_minimum(self):
        """Above 1,024 tokens, hits grow in 128-token steps."""
        hits = replay_hits(OpenAICache(), [seq(0, 2000), seq(0, 2100)])
        assert hits == [0, 1920]
        assert (hits[1] - 1024) % 128 == 0

    def test_small_parameters(self):
        """With minimum 8 and step 4, a 7-token prefix misses and a 12-token one hits."""
        model = OpenAICache(minimum=8, step=4)
        hits = replay_hits(model, [seq(0, 7), seq(0, 12), seq(0, 13)])
        assert hits == [0, 0, 12]

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [({"step": 0}, "step must be a positive"), ({"minimum": 100}, "multiple of step")],
    )
    def test_rejects_bad_parameters(self, kwargs, match):
        """Impossible parameters are refused at construction."""
        with pytest.raises(ValueError, match=match):
            OpenAICache(**kwargs)


class TestVLLM:
    def test_full_blocks_only(self):
        """A request hits only the full 16-token blocks of the shared prefix."""
        assert replay_hits(VLLMCache(), [seq(0, 40), [*seq(0, 40), 7]]) == [0, 32]

    def test_never_the_last_token(self):
        """An identical request still recomputes its last token, so its last block misses."""
        assert replay_hits(VLLMCache(block_size=4), [seq(0, 8), seq(0, 8), seq(0, 9)]) == [0, 4, 8]

    def test_blocks_are_chained_to_their_parent(self):
        """The same block after a different prefix does not hit."""
        a, b, c = seq(0, 4), seq(10, 4), seq(20, 4)
        hits = replay_hits(VLLMCache(block_size=4), [[*a, *b, 1], [*c, *b, 1]])
        assert hits == [0, 0]


class TestAnthropic:
    def test_hit_at_a_breakpoint_written_earlier(self):
        """A request reads the longest earlier breakpoint prefix it shares, not more."""
        model = AnthropicCache(min_tokens=4)
        first = seq(0, 10)
        second = [*seq(0, 8), 99, 98, 97]  # shares 8 tokens: the breakpoint at 6 hits
        hits = replay_hits(model, [first, second], [[6, 10], [11]])
        assert hits == [0, 6]

    def test_rolling_breakpoint_hits_the_whole_previous_request(self):
        """With a breakpoint at each request's end, an appended request reads all of the last."""
        model = AnthropicCache(min_tokens=4)
        assert replay_hits(model, [seq(0, 10), seq(0, 15), seq(0, 30)]) == [0, 10, 15]

    def test_short_prefixes_are_not_cached(self):
        """A breakpoint below the minimum length writes nothing."""
        model = AnthropicCache(min_tokens=5)
        assert replay_hits(model, [seq(0, 4), seq(0, 9), seq(0, 12)]) == [0, 0, 9]

    def test_default_minimum_is_1024(self):
        """With the defaults, a repeated 1,000-token prefix misses."""
        assert replay_hits(AnthropicCache(), [seq(0, 1000), seq(0, 1300)]) == [0, 0]

    def test_hit_can_end_mid_block(self):
        """Breakpoints fall at any token, not only on 16-token blocks."""
        model = AnthropicCache(min_tokens=4)
        hits = replay_hits(model, [seq(0, 37), [*seq(0, 37), 5]])
        assert hits == [0, 37]

    @pytest.mark.parametrize(
        ("marks", "match"),
        [([1, 2, 3, 4, 5], "Anthropic allows 4"), ([50], "outside a request")],
    )
    def test_rejects_bad_breakpoints(self, marks, match):
        """Too many breakpoints, or one past the end, are refused."""
        with pytest.raises(ValueError, match=match):
            AnthropicCache(min_tokens=1).simulator().serve(seq(0, 10), marks)


class TestReplayHits:
    def test_breakpoint_lists_must_align(self):
        """One breakpoint list per request, or a clear error."""
        with pytest.raises(ValueError, match="2 requests but 1 breakpoint lists"):
            replay_hits(AnthropicCache(), [[1], [2]], [[1]])


# Pinned by mutation testing (folded in from tests/unit/harness/simulation/test_cache_models.py):
# Cache-model rules that `scripts/mutate` showed untested; each mutant changed a published hit.
#
# - block digests are chained to their parent, so an equal block after a different prefix is no
#   hit (one unchained digest made a binary search report a false prefix);
# - hits are whole token counts (`int`), never floats that print as ``16.0``;
# - an Anthropic breakpoint below the minimum skips only itself, not the later ones;
# - an Anthropic entry is keyed by its whole prefix, and positions are kept for any order of writes.


class TestChainedBlocks:
    @pytest.mark.parametrize(
        "model", [DeepSeekCache(unit=4), OpenAICache(minimum=4, step=4), VLLMCache(block_size=4)]
    )
    def test_same_blocks_after_a_different_first_block_miss(self, model: CacheModel) -> None:
        """A block seen only after another prefix is no hit at the start of a request."""
        a, b, c = seq(0, 4), seq(10, 4), seq(20, 4)
        requests = [[*a, *b, 1], [*a, *c, 1], [*c, 1]]
        assert replay_hits(model, requests) == [0, 4, 0]


class TestWholeTokens:
    def test_every_model_returns_ints(self) -> None:
        """Hits are ints for every provider model (a float would print as 16.0 in the report)."""
        requests = [seq(0, 1500), seq(0, 1700), [*seq(0, 1600), 3]]
        for model in PROVIDER_MODELS:
            hits = replay_hits(model, requests)
            assert all(type(h) is int for h in hits), (model.name, hits)
            assert hits[1] > 0


class TestAnthropicEntries:
    def test_a_short_breakpoint_skips_only_itself(self) -> None:
        """A breakpoint under the minimum writes nothing, and a later one is still written."""
        model = AnthropicCache(min_tokens=5)
        hits = replay_hits(model, [seq(0, 12), [*seq(0, 10), 99, 98]], [[2, 10], [12]])
        assert hits == [0, 10]

    def test_entries_are_keyed_by_the_whole_prefix(self) -> None:
        """A breakpoint on a block boundary after a different block is no hit."""
        model = AnthropicCache(min_tokens=4)
        first = [*seq(0, 16), *seq(100, 16)]
        second = [*seq(0, 16), *seq(200, 16), 7]
        assert replay_hits(model, [first, second], [[32], [33]]) == [0, 0]

    def test_a_shorter_breakpoint_written_later_is_found(self) -> None:
        """Positions written out of order are all kept: a later, shorter breakpoint still hits."""
        model = AnthropicCache(min_tokens=4)
        requests = [seq(0, 20), seq(0, 12), [*seq(0, 11), 99]]
        assert replay_hits(model, requests, [[20], [10], [12]]) == [0, 0, 10]


class TestParameters:
    @pytest.mark.parametrize(
        ("build", "name"),
        [
            (lambda: DeepSeekCache(unit=0), "unit"),
            (lambda: OpenAICache(minimum=0), "minimum"),
            (lambda: OpenAICache(step=0), "step"),
            (lambda: VLLMCache(block_size=0), "block_size"),
            (lambda: AnthropicCache(min_tokens=0), "min_tokens"),
            (lambda: AnthropicCache(max_breakpoints=0), "max_breakpoints"),
        ],
    )
    def test_zero_is_refused_naming_the_parameter(self, build: object, name: str) -> None:
        """Each model refuses a parameter under 1, naming it."""
        assert callable(build)
        with pytest.raises(ValueError, match=f"^{name} must be a positive number of tokens, not 0"):
            build()

    def test_misaligned_breakpoint_lists_are_refused(self) -> None:
        """replay_hits refuses a breakpoint list of another length than the requests."""
        with pytest.raises(ValueError, match="2 requests but 1 breakpoint lists"):
            replay_hits(AnthropicCache(), [seq(0, 5), seq(0, 6)], [[5]])


class TestBoundaries:
    @pytest.mark.parametrize("n", [1, 2, 3, 5])
    def test_requests_differing_at_the_first_token_share_nothing(self, n: int) -> None:
        """No common prefix when the very first token differs, at any length."""
        assert common_prefix(pack([7, *seq(0, n - 1)]), pack([8, *seq(0, n - 1)])) == 0

    def test_vllm_recomputes_the_last_token_even_with_one_token_blocks(self) -> None:
        """VLLM never serves a whole request from cache: the last token is always computed."""
        assert replay_hits(VLLMCache(block_size=1), [[5], [5], [5, 6], [5, 6]]) == [0, 0, 1, 1]


class TestLifetimes:
    def test_an_unread_entry_expires_though_its_blocks_live_on(self) -> None:
        """Anthropic: a longer entry's reads do not refresh a shorter one; it expires alone."""
        model = AnthropicCache()  # 1,024-token minimum, 300 s
        a, c = seq(0, 2300), seq(0, 1500)
        hits = replay_hits(model, [a, a, c], [(1100, 2200), (2200,), (1500,)], [0.0, 200.0, 400.0])
        assert hits == [0, 2200, 0]

    def test_vllm_honours_a_lifetime_when_given(self) -> None:
        """VLLM has no lifetime by default, but one given is applied."""
        requests = [seq(0, 9), seq(0, 9)]
        assert replay_hits(VLLMCache(block_size=4), requests, None, [0.0, 20.0]) == [0, 8]
        timed = VLLMCache(block_size=4, ttl_seconds=10)
        assert replay_hits(timed, requests, None, [0.0, 20.0]) == [0, 0]
        assert replay_hits(timed, requests, None, [0.0, 5.0]) == [0, 8]

    def test_a_lifetime_under_a_second_is_allowed(self) -> None:
        """Any positive lifetime is valid, half a second included."""
        for cls in (AnthropicCache, OpenAICache, DeepSeekCache, VLLMCache):
            assert cls(ttl_seconds=0.5).ttl_seconds == 0.5

    def test_vllm_hits_are_ints_when_the_request_bounds_them(self) -> None:
        """The last-token rule bounds the hit here (8 tokens, blocks of 4): still an int."""
        hits = replay_hits(VLLMCache(block_size=4), [seq(0, 8), seq(0, 8)])
        assert hits == [0, 4]
        assert all(type(h) is int for h in hits)
