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
    blind_summarizer,
)
from harness.simulation._cache_models import (
    PROVIDER_MODELS,
    AnthropicCache,
    CacheModel,
    CacheSimulator,
    DeepSeekCache,
    OpenAICache,
    common_prefix,
    pack,
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
    todo_call_list,
    update_args,
)
from harness.simulation._demo import (
    DEFAULT_SEED,
    DEFAULT_TURNS,
    DEFAULT_WINDOW,
    DEMO_PROFILE,
    DemoResult,
    run_demo,
)
from harness.simulation._pricing import (
    PriceTable,
    default_prices,
    output_tokens,
    session_cost,
)
from harness.simulation._request_replay import (
    ENVIRONMENT,
    ReplayResult,
    SegmentTokens,
    SummarizerFor,
    SummaryCallRecord,
    log_payloads,
    replay,
    serialize,
)
from harness.simulation._session_exchange import (
    dump_exchange,
    to_exchange,
)
from harness.simulation._session_profiles import (
    PROFILES,
)
from harness.simulation._sessions import (
    generate,
    user_tools,
    write_session,
)

__all__ = [
    "BASELINE",
    "BLIND_RUNS",
    "DEFAULT_SEED",
    "DEFAULT_TURNS",
    "DEFAULT_WINDOW",
    "DEMO_PROFILE",
    "ENVIRONMENT",
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
    "CacheModel",
    "CacheSimulator",
    "DeepSeekCache",
    "DemoResult",
    "OpenAICache",
    "PriceTable",
    "ReplayResult",
    "SegmentTokens",
    "Strategy",
    "SummarizerFor",
    "SummaryCallRecord",
    "blind_summarizer",
    "common_prefix",
    "created_task_id",
    "default_prices",
    "dump_exchange",
    "generate",
    "log_payloads",
    "output_tokens",
    "pack",
    "replay",
    "run_demo",
    "serialize",
    "session_cost",
    "to_exchange",
    "todo_call_list",
    "update_args",
    "user_tools",
    "write_session",
]
