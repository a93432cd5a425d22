"""Why a compaction was refused: below the trigger, or no cut lets a Checkpoint fit the window.

Invariants: a refusal names every part of the request it counted, so the user sees which part
to change.
"""

from __future__ import annotations

from compaction.errors import CompactionError
from compaction.policy import CompactionPolicy


def below_threshold(policy: CompactionPolicy, context: int, fixed: int) -> CompactionError:
    """Return the error of a request below the trigger (nothing was done)."""
    parts = f" ({fixed} fixed + {context} context)" if fixed else ""
    reserve = f", {policy.output_reserve} reserved for the reply" if policy.output_reserve else ""
    return CompactionError(
        "below_threshold",
        f"the request holds {fixed + context} tokens{parts}{reserve}, below the trigger of "
        f"{policy.trigger_tokens} ({policy.threshold:g} of a {policy.window_tokens}-token "
        "window); nothing was done (force it with force=True, CLI --force)",
    )


def does_not_fit(
    p: CompactionPolicy, fixed: int, system: int, checkpoint: int, tail: int
) -> CompactionError:
    """Return the error naming each part of a request that cannot fit the window."""
    parts = [
        f"{fixed} fixed (system prompt and tools)",
        f"{system} system messages",
        f"{checkpoint} Checkpoint",
    ]
    if tail:
        parts.append(f"{tail} of tail that cannot be cut (a tool call waiting for its result)")
    parts.append(f"{p.output_reserve} reserved for the reply")
    total = fixed + system + checkpoint + tail + p.output_reserve
    return CompactionError(
        "does_not_fit",
        f"{' + '.join(parts)} = {total} tokens, over the {p.window_tokens}-token window "
        "even with nothing kept; use a larger window, a smaller tool catalog or system "
        "prompt, fewer unfinished tasks, or a smaller output reserve",
    )
