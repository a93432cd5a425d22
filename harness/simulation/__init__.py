"""Simulated agent sessions: what `harness demo` runs, and what the benchmarks measure with.

A seeded generator writes a synthetic coding session (`sessions`); the request replay runs it
request by request through the prompt builder and the compactor (`request_replay`, its loop in
`replay_loop`, its records in `replay_records`, the canonical lines in `serialization`) under one
of the todo-placement and mode-switch strategies (`context_strategies`), and feeds each request
to the provider prefix-cache models (`cache_models`, `anthropic_cache`, over `cache_blocks`);
`demo` puts them together for `harness demo`.

This package ships with the library (the demo needs it at run time); the benchmark suite itself
(`benchmarks/`) lives in the checkout and imports these names from here.

Invariants: everything here is a pure function of its inputs (seed, turns, strategy, policy,
tokenizer), wall time aside; nothing touches the network.
"""

from harness.simulation._blind import (
    BLIND_RUNS,
    CONTENT_BLIND_SUMMARY,
    BlindSummarizer,
    blind_summarizer,
)
from harness.simulation._cache_models import (
    PROVIDER_MODELS,
    AnthropicCache,
    CacheModel,
    CacheSimulator,
    DeepSeekCache,
    OpenAICache,
    VLLMCache,
    common_prefix,
    pack,
    replay_hits,
)
from harness.simulation._context_strategies import (
    BASELINE,
    STRATEGIES,
    SWITCH_VARIANTS,
    TASK_CREATE_NAMES,
    TASK_UPDATE_NAMES,
    TODO_STRATEGIES,
    TODO_TOOL,
    TODO_TOOL_NAMES,
    Strategy,
    created_task_id,
    recorded_todos,
    render_todos,
    retained,
    todo_call_list,
    update_args,
    visible_todos,
)
from harness.simulation._demo import (
    CONTRASTS,
    DEFAULT_SEED,
    DEFAULT_TURNS,
    DEFAULT_WINDOW,
    DEMO_PROFILE,
    DemoResult,
    run_demo,
)
from harness.simulation._pricing import (
    PRICES_PATH,
    Cost,
    Price,
    PriceTable,
    default_prices,
    load_prices,
    output_tokens,
    session_cost,
)
from harness.simulation._request_replay import (
    ENVIRONMENT,
    ReplayResult,
    SegmentTokens,
    SummarizerFor,
    SummaryCallRecord,
    anthropic_offsets,
    log_payloads,
    replay,
    serialize,
)
from harness.simulation._session_exchange import (
    EXCHANGE_FORMAT,
    dump_exchange,
    load_exchange,
    to_exchange,
)
from harness.simulation._session_profiles import (
    DEFAULT_PROFILE,
    PROFILES,
    SessionProfile,
    get_profile,
)
from harness.simulation._sessions import (
    generate,
    unfinished,
    user_tools,
    write_session,
)

__all__ = [
    "BASELINE",
    "BLIND_RUNS",
    "CONTENT_BLIND_SUMMARY",
    "CONTRASTS",
    "DEFAULT_PROFILE",
    "DEFAULT_SEED",
    "DEFAULT_TURNS",
    "DEFAULT_WINDOW",
    "DEMO_PROFILE",
    "ENVIRONMENT",
    "EXCHANGE_FORMAT",
    "PRICES_PATH",
    "PROFILES",
    "PROVIDER_MODELS",
    "STRATEGIES",
    "SWITCH_VARIANTS",
    "TASK_CREATE_NAMES",
    "TASK_UPDATE_NAMES",
    "TODO_STRATEGIES",
    "TODO_TOOL",
    "TODO_TOOL_NAMES",
    "AnthropicCache",
    "BlindSummarizer",
    "CacheModel",
    "CacheSimulator",
    "Cost",
    "DeepSeekCache",
    "DemoResult",
    "OpenAICache",
    "Price",
    "PriceTable",
    "ReplayResult",
    "SegmentTokens",
    "SessionProfile",
    "Strategy",
    "SummarizerFor",
    "SummaryCallRecord",
    "VLLMCache",
    "anthropic_offsets",
    "blind_summarizer",
    "common_prefix",
    "created_task_id",
    "default_prices",
    "dump_exchange",
    "generate",
    "get_profile",
    "load_exchange",
    "load_prices",
    "log_payloads",
    "output_tokens",
    "pack",
    "recorded_todos",
    "render_todos",
    "replay",
    "replay_hits",
    "retained",
    "run_demo",
    "serialize",
    "session_cost",
    "to_exchange",
    "todo_call_list",
    "unfinished",
    "update_args",
    "user_tools",
    "visible_todos",
    "write_session",
]
