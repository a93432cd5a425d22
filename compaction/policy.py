"""The compaction policy: when the whole request is due for compaction and how much to keep.

Everything the model receives counts: the fixed part (system prompt and tool catalog, measured by
the caller), the context view and the output reserved for the reply. Compaction is due when
``fixed + context + output_reserve`` reaches ``threshold`` of the window (default 0.9 of 128,000
tokens); the kept tail takes at most ``retain`` of the window (default 0.05; when the latest step
alone is larger, it is kept if it fits, `compaction.cuts.select_cut`); a tool result larger than
``tool_output_share`` of the window enters the context clipped (default 0.1). The defaults come
from the continuity grid (`benchmarks/quality/continuity.py`, "Choosing B's defaults" in
`benchmarks/README.md`).

The task-boundary trigger. With ``boundary_threshold`` (a share of the window), compaction is
also due right after a todo item or a shared task turned completed (since the previous model
call) when the whole request is at least that share of the window: the cut then falls at a
natural break, right after a step is done, instead of mid-task at the size trigger (`is_due`).
Later calls of the next step are left to the size trigger alone, so one completion never acts as
a lower size threshold. The default, ``"auto"``, is `DEFAULT_BOUNDARY` of the window wherever
that floor is valid for the policy (at most the threshold, above ``retain + summary_share``) and
no boundary trigger where it is not, so a policy with a low threshold stays valid; None turns the
trigger off; a number is validated as given (`boundary_share` is the floor in effect).

Invariants: a policy is immutable and valid once built (bad values raise `ConfigError` naming
them); ``retain + summary_share < threshold``, so a compaction can always shrink the context;
the same holds for the boundary floor in effect (`boundary_share`), which is at most
``threshold``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Final, Literal

from compaction.errors import ConfigError

DEFAULT_WINDOW: Final = 128_000
"""Default context window, in tokens."""

DEFAULT_TOOL_OUTPUT_SHARE: Final = 0.1
"""Default share of the window a single tool result may take in the context."""

DEFAULT_THRESHOLD: Final = 0.9
"""Default share of the window at which the whole request is due for compaction."""

DEFAULT_RETAIN: Final = 0.05
"""Default share of the window the kept tail may take."""

DEFAULT_BOUNDARY: Final = 0.4
"""Default task-boundary floor, a share of the window (``boundary_threshold="auto"``)."""

AUTO: Final = "auto"
"""The ``boundary_threshold`` that means `DEFAULT_BOUNDARY` where it is valid, else none."""

DEFAULT_TOOL_OUTPUT_CAP: Final = int(DEFAULT_TOOL_OUTPUT_SHARE * DEFAULT_WINDOW)
"""A session's default tool-output cap, in tokens: 0.1 of the default window (12,800)."""


@dataclass(frozen=True)
class CompactionPolicy:
    """When to compact and how much to keep.

    Args:
        window_tokens: the model's context window, in tokens.
        threshold: compact when the whole request (fixed part, context and output reserve)
            reaches this share of the window (default 0.9).
        retain: keep at most this share of the window verbatim as the tail (default 0.05).
        output_reserve: tokens kept free for the model's reply, counted in the request
            (default 0).
        summary_share: share of the window the narrative sections may use (default 0.03).
        tool_output_share: a tool result larger than this share of the window enters the
            context as its head and tail (the log keeps it whole; default 0.1). Give the cap
            to the session: ``Session(path, tool_output_cap=policy.tool_output_tokens)``.
        boundary_threshold: also compact right after a todo item or shared task turned
            completed (since the previous model call) when the whole request reaches this share
            of the window. ``"auto"`` (the default): `DEFAULT_BOUNDARY` where that is valid for
            this policy, else none; None: the size trigger only.

    Raises:
        ConfigError: naming every bad value, e.g. a retain share not below the threshold.
    """

    window_tokens: int = DEFAULT_WINDOW
    threshold: float = DEFAULT_THRESHOLD
    retain: float = DEFAULT_RETAIN
    output_reserve: int = 0
    summary_share: float = 0.03
    tool_output_share: float = DEFAULT_TOOL_OUTPUT_SHARE
    boundary_threshold: float | Literal["auto"] | None = AUTO

    def __post_init__(self) -> None:
        problems = self._problems()
        if problems:
            raise ConfigError("invalid CompactionPolicy: " + "; ".join(problems))

    def _problems(self) -> list[str]:
        problems: list[str] = []
        w, t, r, o, s = (
            self.window_tokens,
            self.threshold,
            self.retain,
            self.output_reserve,
            self.summary_share,
        )
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            return [f"window_tokens must be a positive integer, not {w!r}"]
        named = (
            ("threshold", t),
            ("retain", r),
            ("summary_share", s),
            ("tool_output_share", self.tool_output_share),
        )
        for name, value in named:
            if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
                return [f"{name} must be a number, not {value!r}"]
        if not 0 < t <= 1:
            problems.append(f"threshold must be in (0, 1], not {t!r}")
        if not 0 <= r < 1:
            problems.append(f"retain must be in [0, 1), not {r!r}")
        if not 0 < s < 1:
            problems.append(f"summary_share must be in (0, 1), not {s!r}")
        if not 0 < self.tool_output_share < 1:
            problems.append(f"tool_output_share must be in (0, 1), not {self.tool_output_share!r}")
        if not problems and r + s >= t:
            problems.append(
                f"retain ({r!r}) + summary_share ({s!r}) must stay below threshold ({t!r}), "
                "or compaction could not shrink the context"
            )
        problems += self._boundary_problems()
        if isinstance(o, bool) or not isinstance(o, int) or not 0 <= o < w:
            problems.append(f"output_reserve must be an integer in [0, window_tokens), not {o!r}")
        elif not problems and o >= int(t * w):
            problems.append(
                f"output_reserve ({o!r}) must stay below the trigger ({t!r} of {w!r} tokens), "
                "or every request would be due for compaction"
            )
        return problems

    def _boundary_problems(self) -> list[str]:
        b = self.boundary_threshold
        if b is None or b == AUTO:
            return []
        if not isinstance(b, int | float) or isinstance(b, bool) or math.isnan(b):
            return [f"boundary_threshold must be a number, {AUTO!r} or None, not {b!r}"]
        if not 0 < b <= self.threshold:
            return [f"boundary_threshold must be in (0, threshold={self.threshold!r}], not {b!r}"]
        if self.retain + self.summary_share >= b:
            return [
                f"retain ({self.retain!r}) + summary_share ({self.summary_share!r}) must stay "
                f"below boundary_threshold ({b!r}), or a boundary compaction could not shrink "
                "the context"
            ]
        return []

    @property
    def trigger_tokens(self) -> int:
        """Request size (fixed part + context, the reserve set aside) at which compaction is due."""
        return int(self.threshold * self.window_tokens) - self.output_reserve

    @property
    def boundary_share(self) -> float | None:
        """The task-boundary floor in effect, a share of the window (None: no boundary trigger).

        ``"auto"`` resolves to `DEFAULT_BOUNDARY` when that floor is at most the threshold and
        above ``retain + summary_share`` (so a boundary compaction can shrink the context), else
        to None.
        """
        b = self.boundary_threshold
        if b != AUTO:
            return b
        fits = self.retain + self.summary_share < DEFAULT_BOUNDARY <= self.threshold
        return DEFAULT_BOUNDARY if fits else None

    @property
    def boundary_tokens(self) -> int | None:
        """Request size at which a completed item makes compaction due (None: no boundary)."""
        share = self.boundary_share
        if share is None:
            return None
        return int(share * self.window_tokens) - self.output_reserve

    @property
    def retain_tokens(self) -> int:
        """Most tokens of the kept tail."""
        return int(self.retain * self.window_tokens)

    @property
    def summary_tokens(self) -> int:
        """Budget of the narrative sections together."""
        return max(1, int(self.summary_share * self.window_tokens))

    @property
    def tool_output_tokens(self) -> int:
        """Largest tool result, in tokens, that enters the context whole."""
        return max(1, int(self.tool_output_share * self.window_tokens))

    @property
    def room_tokens(self) -> int:
        """Most tokens a request may hold so the reply's reserve still fits the window."""
        return self.window_tokens - self.output_reserve

    def capped(self, window_tokens: int | None) -> CompactionPolicy:
        """Return this policy with a window of at most `window_tokens` (a provider's proof).

        The reserve shrinks to stay under the trigger; None, a larger window, or one too small
        to make a valid policy returns the policy itself.
        """
        if window_tokens is None or window_tokens >= self.window_tokens:
            return self
        window = max(1, window_tokens)
        reserve = min(self.output_reserve, int(window * self.threshold) // 2)
        try:
            return replace(self, window_tokens=window, output_reserve=reserve)
        except ConfigError:
            return self

    def in_counted_tokens(self, scale: float | None) -> CompactionPolicy:
        """Return this policy in the toolkit's counted tokens, for a provider's token scale.

        The window and the reserve are the provider's tokens; with `scale` provider tokens per
        counted token (`Session.token_scale`) they shrink by it, so every comparison against
        counted figures means the provider's limit. None or 1 returns the policy itself.
        """
        if scale is None or scale == 1:
            return self
        return replace(
            self,
            window_tokens=max(1, int(self.window_tokens / scale)),
            output_reserve=int(self.output_reserve / scale),
        )

    def should_compact(self, context_tokens: int, fixed_tokens: int = 0) -> bool:
        """Tell whether a request of this size is due for compaction (O(1), for agent loops).

        Args:
            context_tokens: tokens of the context view (`Session.context_tokens`).
            fixed_tokens: tokens of the system prompt and tool catalog (`prompts.fixed_tokens`).
        """
        return fixed_tokens + context_tokens >= self.trigger_tokens

    def is_due(self, context_tokens: int, fixed_tokens: int = 0, *, completed: int = 0) -> bool:
        """Tell whether compaction is due: the size trigger, or a task boundary (O(1)).

        Args:
            context_tokens: tokens of the context view (`Session.context_tokens`).
            fixed_tokens: tokens of the system prompt and tool catalog.
            completed: todo items and tasks that turned completed since the previous model
                call (`Session.progress.completed_since_call`).
        """
        return self.should_compact(context_tokens, fixed_tokens) or self.at_boundary(
            context_tokens, fixed_tokens, completed=completed
        )

    def at_boundary(self, context_tokens: int, fixed_tokens: int = 0, *, completed: int) -> bool:
        """Tell whether the task-boundary trigger fires (see the module docstring)."""
        floor = self.boundary_tokens
        return floor is not None and completed > 0 and fixed_tokens + context_tokens >= floor
