"""Context Harness, prompt side: modes, templates, the tool catalog and request assembly.

A mode is data (`Mode`); `PromptBuilder` lays out its prompt with the stable layers first
(core -> tool catalog -> mode block -> environment); `openai_request` and `anthropic_request`
add a session's context view; `policy_table` turns modes into the tool policies the session
enforces (refusing `todo_write`, the task writes and forbidden user tools by mode).
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
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
        compact_context_spec,
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
        TOKEN_BYTES,
        PrefixOrder,
        catalog_text,
        common_prefix,
        common_prefix_length,
        linearize,
        shared_prefix_tokens,
    )

_EXPORTS: dict[str, str] = {
    "BUILTIN_MODES": "prompts.modes",
    "CACHE_CONTROL": "prompts.requests",
    "DEFAULT_MODE": "prompts.modes",
    "LIMITS": "prompts.sandbox",
    "MAX_CACHE_BREAKPOINTS": "prompts.requests",
    "RESPONSES_BACKEND": "prompts.responses",
    "SWITCH_STRATEGIES": "prompts.builder",
    "TOKEN_BYTES": "prompts.stability",
    "TOOL_STRATEGIES": "prompts.modes",
    "BreakpointSection": "prompts.requests",
    "CacheBreakpoint": "prompts.requests",
    "Environment": "prompts.builder",
    "Mode": "prompts.modes",
    "PrefixOrder": "prompts.stability",
    "PromptBuilder": "prompts.builder",
    "PromptLayers": "prompts.builder",
    "RenderLimits": "prompts.sandbox",
    "RequestSize": "prompts.budget",
    "SwitchStrategy": "prompts.builder",
    "TaskPolicy": "prompts.modes",
    "TodoPolicy": "prompts.modes",
    "ToolCatalog": "prompts.catalog",
    "ToolPolicy": "prompts.modes",
    "ToolSpec": "prompts.catalog",
    "ToolStrategy": "prompts.modes",
    "anthropic_message_sources": "prompts.requests",
    "anthropic_messages": "prompts.requests",
    "anthropic_request": "prompts.requests",
    "anthropic_system": "prompts.requests",
    "anthropic_tool": "prompts.catalog",
    "available_modes": "prompts.modes",
    "cache_breakpoints": "prompts.requests",
    "catalog_text": "prompts.stability",
    "check_plain": "prompts.sandbox",
    "clear_tool_uses_edit": "prompts.requests",
    "common_prefix": "prompts.stability",
    "common_prefix_length": "prompts.stability",
    "compact_context_spec": "prompts.catalog",
    "compaction_backend": "prompts.backends",
    "dumps": "prompts.requests",
    "fixed_tokens": "prompts.budget",
    "get_mode": "prompts.modes",
    "linearize": "prompts.stability",
    "load_modes": "prompts.modes",
    "load_tools": "prompts.catalog",
    "mode_data": "prompts.builder",
    "mode_policy": "prompts.refusals",
    "openai_message": "prompts.requests",
    "openai_request": "prompts.requests",
    "openai_tool": "prompts.catalog",
    "policy_table": "prompts.refusals",
    "provider_conversation": "prompts.responses",
    "record_server_compaction": "prompts.backends",
    "refusal": "prompts.refusals",
    "render": "prompts.rendering",
    "request_size": "prompts.budget",
    "responses_input": "prompts.responses",
    "responses_items": "prompts.responses",
    "responses_request": "prompts.responses",
    "responses_tool": "prompts.responses",
    "shared_prefix_tokens": "prompts.stability",
    "switch_mode": "prompts.builder",
    "task_tool_spec": "prompts.catalog",
    "todo_write_description": "prompts.catalog",
    "todo_write_spec": "prompts.catalog",
    "tool_refusal": "prompts.refusals",
    "tool_spec": "prompts.catalog",
}
"""Each public name and the module that defines it: the one place a name is mapped to a module.

A name is imported from its module on first use (PEP 562), so ``import prompts`` costs almost
nothing and a command pays only for the parts it touches."""

__all__ = [
    "BUILTIN_MODES",
    "CACHE_CONTROL",
    "DEFAULT_MODE",
    "LIMITS",
    "MAX_CACHE_BREAKPOINTS",
    "RESPONSES_BACKEND",
    "SWITCH_STRATEGIES",
    "TOKEN_BYTES",
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
    "common_prefix",
    "common_prefix_length",
    "compact_context_spec",
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


def __getattr__(name: str) -> object:
    """Import a public name from its module on first use, and keep it."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """List the module's attributes and every public name, loaded or not."""
    return sorted(set(globals()) | set(__all__))
