"""Context Harness, prompt side: modes, templates, the tool catalog and request assembly.

A mode is data (`Mode`); `PromptBuilder` lays out its prompt with the stable layers first
(core -> tool catalog -> mode block -> environment); `openai_request` and `anthropic_request`
add a session's context view; `run_todo_write` refuses `todo_write` where a mode forbids it.
"""

from prompts.builder import (
    SWITCH_STRATEGIES,
    Environment,
    PromptBuilder,
    PromptLayers,
    SwitchStrategy,
    refusal,
    run_todo_write,
    switch_mode,
    tool_refusal,
)
from prompts.catalog import (
    ToolCatalog,
    ToolSpec,
    load_tools,
    todo_write_description,
    todo_write_spec,
    tool_spec,
)
from prompts.modes import (
    BUILTIN_MODES,
    DEFAULT_MODE,
    TOOL_STRATEGIES,
    Mode,
    TodoPolicy,
    ToolPolicy,
    ToolStrategy,
    available_modes,
    get_mode,
    load_modes,
)
from prompts.requests import (
    CACHE_CONTROL,
    MAX_CACHE_BREAKPOINTS,
    BreakpointSection,
    CacheBreakpoint,
    anthropic_message_sources,
    anthropic_messages,
    anthropic_request,
    anthropic_system,
    cache_breakpoints,
    dumps,
    openai_message,
    openai_request,
)
from prompts.stability import (
    PrefixOrder,
    catalog_text,
    common_prefix_length,
    linearize,
    shared_prefix_tokens,
)

__all__ = [
    "BUILTIN_MODES",
    "CACHE_CONTROL",
    "DEFAULT_MODE",
    "MAX_CACHE_BREAKPOINTS",
    "SWITCH_STRATEGIES",
    "TOOL_STRATEGIES",
    "BreakpointSection",
    "CacheBreakpoint",
    "Environment",
    "Mode",
    "PrefixOrder",
    "PromptBuilder",
    "PromptLayers",
    "SwitchStrategy",
    "TodoPolicy",
    "ToolCatalog",
    "ToolPolicy",
    "ToolSpec",
    "ToolStrategy",
    "anthropic_message_sources",
    "anthropic_messages",
    "anthropic_request",
    "anthropic_system",
    "available_modes",
    "cache_breakpoints",
    "catalog_text",
    "common_prefix_length",
    "dumps",
    "get_mode",
    "linearize",
    "load_modes",
    "load_tools",
    "openai_message",
    "openai_request",
    "refusal",
    "run_todo_write",
    "shared_prefix_tokens",
    "switch_mode",
    "todo_write_description",
    "todo_write_spec",
    "tool_refusal",
    "tool_spec",
]
