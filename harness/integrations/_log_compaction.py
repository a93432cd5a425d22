"""One compaction of an adapter's log: when due, or forced after an overflow; "not now" is quiet.

Both adapters (`langchain_agents`, `openai_agents`) compact the same way: `maybe_compact` when
the whole request may be due, or a forced `compact` under a given policy (after a provider
refused a request as too long, or when the SDK's hook says ``force``). A refusal that only means
"not now" returns None; a failure the adapter reports instead of raising is kept in its list.

Invariants: framework-free (imports no adapter's framework); a compaction that happened is
returned; anything but a listed refusal raises.
"""

from __future__ import annotations

from collections.abc import Sequence

from compaction import (
    CompactionError,
    CompactionPolicy,
    CompactionResult,
    Session,
    Summarizer,
    compact,
    maybe_compact,
)

QUIET_REFUSALS = ("below_threshold", "nothing_to_compact", "no_safe_cut")
"""Compaction refusals that only mean "not now": the agent goes on with the context as it is."""


def compact_log(
    session: Session,
    policy: CompactionPolicy,
    *,
    summarizer: Summarizer | None,
    fixed_tokens: int,
    forced: CompactionPolicy | None = None,
    quiet: Sequence[str] = QUIET_REFUSALS,
    reported: Sequence[str] = (),
    failures: list[CompactionError] | None = None,
) -> CompactionResult | None:
    """Compact `session` when due under `policy`, or, with `forced`, now under `forced`.

    Args:
        session: the adapter's log.
        policy: the policy a due compaction is judged by.
        summarizer: writes the Checkpoint's narrative sections (None: extractive).
        fixed_tokens: the request's fixed part (instructions, tool specs), counted.
        forced: compact even below the threshold, under this policy.
        quiet: refusal codes that return None.
        reported: failure codes appended to `failures` (then None is returned).
        failures: where a reported failure goes.

    Returns:
        The compaction, or None when a quiet refusal or a reported failure stopped it.
    """
    try:
        if forced is None:
            return maybe_compact(session, policy, summarizer=summarizer, fixed_tokens=fixed_tokens)
        return compact(
            session, forced, summarizer=summarizer, force=True, fixed_tokens=fixed_tokens
        )
    except CompactionError as exc:
        if exc.code in reported and failures is not None:
            failures.append(exc)
            return None
        if exc.code in quiet:
            return None
        raise


__all__ = ["QUIET_REFUSALS", "compact_log"]
