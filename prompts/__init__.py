"""Context Harness, prompt side: modes, templates, the tool catalog and request assembly.

A mode is data (`Mode`); `PromptBuilder` lays out its prompt with the stable layers first
(core -> tool catalog -> mode block -> environment); `openai_request` and `anthropic_request`
add a session's context view; `policy_table` turns modes into the tool policies the session
enforces (refusing `todo_write`, the task writes and forbidden user tools by mode).
"""

from prompts.backends import compaction_backend, record_server_compaction
from prompts.budget import RequestSize, fixed_tokens, request_size
from prompts.builder import (
    SWITCH_STRATEGIES,
    Environment,
    PromptBuilder,
    PromptLayers,
    SwitchStrategy,
    mode_data,
    switch_mode,
)
from prompts.catalog import (
    ToolCatalog,
    ToolSpec,
    anthropic_tool,
    load_tools,
    openai_tool,
    task_tool_spec,
    todo_write_description,
    todo_write_spec,
    tool_spec,
)
from prompts.modes import (
    BUILTIN_MODES,
    DEFAULT_MODE,
    TOOL_STRATEGIES,
    Mode,
    TaskPolicy,
    TodoPolicy,
    ToolPolicy,
    ToolStrategy,
    available_modes,
    get_mode,
    load_modes,
)
from prompts.refusals import mode_policy, policy_table, refusal, tool_refusal
from prompts.rendering import render
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
    clear_tool_uses_edit,
    dumps,
    openai_message,
    openai_request,
)
from prompts.responses import (
    RESPONSES_BACKEND,
    provider_conversation,
    responses_input,
    responses_items,
    responses_request,
    responses_tool,
)
from prompts.sandbox import LIMITS, RenderLimits, check_plain
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
    "LIMITS",
    "MAX_CACHE_BREAKPOINTS",
    "RESPONSES_BACKEND",
    "SWITCH_STRATEGIES",
    "TOOL_STRATEGIES",
    "BreakpointSection",
    "CacheBreakpoint",
    "Environment",
    "Mode",
    "PrefixOrder",
    "PromptBuilder",
    "PromptLayers",
    "RenderLimits",
    "RequestSize",
    "SwitchStrategy",
    "TaskPolicy",
    "TodoPolicy",
    "ToolCatalog",
    "ToolPolicy",
    "ToolSpec",
    "ToolStrategy",
    "anthropic_message_sources",
    "anthropic_messages",
    "anthropic_request",
    "anthropic_system",
    "anthropic_tool",
    "available_modes",
    "cache_breakpoints",
    "catalog_text",
    "check_plain",
    "clear_tool_uses_edit",
    "common_prefix_length",
    "compaction_backend",
    "dumps",
    "fixed_tokens",
    "get_mode",
    "linearize",
    "load_modes",
    "load_tools",
    "mode_data",
    "mode_policy",
    "openai_message",
    "openai_request",
    "openai_tool",
    "policy_table",
    "provider_conversation",
    "record_server_compaction",
    "refusal",
    "render",
    "request_size",
    "responses_input",
    "responses_items",
    "responses_request",
    "responses_tool",
    "shared_prefix_tokens",
    "switch_mode",
    "task_tool_spec",
    "todo_write_description",
    "todo_write_spec",
    "tool_refusal",
    "tool_spec",
]
