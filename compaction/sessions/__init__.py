"""The session's parts: what `compaction.Session` composes, one job a module.

- `live_views`: every view of the session, folded as events are applied (usage counted lazily);
- `tool_runs`: the built-in tools run against the session (`todo_write`, the task tools).

Rule of this room: a part works on the session through a small protocol or its own state, never
by importing `compaction.session`; hosts use `Session`, not these parts.
"""
