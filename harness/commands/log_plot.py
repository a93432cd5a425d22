"""`harness log LOG --plot FILE.png`: the request size of each model call of a log, as a chart.

`request_series` reads a log's events once: a model call is an assistant message; its request
size is the provider's own figure where the log holds a ``usage/report`` for that call (purpose
``turn``, written just before the assistant message, as an import of a Claude Code transcript
does), else the context counted at that point (the Checkpoint, then every message after the
span it replaced, counted with the tokenizer; the system prompt and tool catalog are not in a
log, so a counted size leaves them out). Compactions mark the call that follows them. A series
that mixes the two never joins them unscaled: each counted size is scaled to the provider's
tokens by the median ratio of reported to counted size over the calls that have both
(`RequestSeries.plotted`), and the legend says so.
`plot_series` draws the series with the compactions marked and the context window drawn.
matplotlib is the ``charts`` extra; without it the command says so in one line.

Invariants: the series is a pure function of the events and the tokenizer; it has one entry per
assistant message, in log order.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from compaction import (
    CheckpointRecorded,
    ConfigError,
    Event,
    MessageAdded,
    Tokenizer,
    UsageReported,
    count_message,
)
from compaction.views import checkpoint_message

CHARTS_MISSING = (
    "--plot needs matplotlib, which is not installed: "
    "pip install 'context-harness[charts]' (or pip install matplotlib)"
)

PLOT_FORMATS: Final = frozenset(
    {"eps", "gif", "jpeg", "jpg", "pdf", "pgf", "png", "ps", "svg", "svgz", "tif", "tiff", "webp"}
)
"""The file suffixes --plot writes (matplotlib picks the format from the suffix)."""


def check_plot_path(path: Path) -> None:
    """Refuse a --plot file whose suffix names no chart format, before the log is read.

    Raises:
        ConfigError: the suffix is not one of `PLOT_FORMATS` (exit 2, a usage error).
    """
    from compaction import ConfigError

    suffix = path.suffix.lower().lstrip(".")
    if suffix not in PLOT_FORMATS:
        raise ConfigError(
            f"--plot {path}: the suffix names the chart's format; use .png, .svg or .pdf "
            f"(or one of {', '.join(sorted(PLOT_FORMATS))})"
        )


@dataclass
class RequestSeries:
    """The request size of each model call of a log, and where each figure came from."""

    sizes: list[int] = field(default_factory=list)
    """Request tokens per model call, in log order."""
    reported: list[bool] = field(default_factory=list)
    """Per call: True when the size is the provider's ``usage/report``, False when counted."""
    compactions: list[int] = field(default_factory=list)
    """Index of the call right after each compaction."""
    counted: list[int] = field(default_factory=list)
    """Per call: the context counted at that point (also where the provider reported)."""

    def scale(self) -> float | None:
        """Median reported size over counted size, over the calls that have both (None: none)."""
        ratios = sorted(
            size / n
            for size, n, reported in zip(self.sizes, self.counted, self.reported, strict=True)
            if reported and n
        )
        return ratios[len(ratios) // 2] if ratios else None

    def plotted(self) -> list[int]:
        """The sizes to draw on one line: counted ones scaled when the series mixes sources."""
        scale = self.scale() if 0 < self.reported_calls < len(self.sizes) else None
        if scale is None:
            return list(self.sizes)
        return [
            size if reported else round(size * scale)
            for size, reported in zip(self.sizes, self.reported, strict=True)
        ]

    @property
    def reported_calls(self) -> int:
        """How many sizes came from the provider's reports."""
        return sum(self.reported)


def request_series(events: Iterable[Event], tokenizer: Tokenizer) -> RequestSeries:
    """Return the request size of each model call (see the module docstring)."""
    out = RequestSeries()
    messages: list[tuple[int, int]] = []  # (seq, tokens) of the messages in the context
    checkpoint = 0
    usage: int | None = None
    for event in events:
        if isinstance(event, UsageReported) and event.data.purpose == "turn":
            usage = event.data.prompt_tokens
        elif isinstance(event, CheckpointRecorded):
            last = event.data.last_seq
            messages = [(s, n) for s, n in messages if s > last]
            checkpoint = count_message(tokenizer, checkpoint_message(event.data))
            out.compactions.append(len(out.sizes))
        elif isinstance(event, MessageAdded):
            if event.data.role == "assistant":
                counted = checkpoint + sum(n for _, n in messages)
                out.sizes.append(usage if usage is not None else counted)
                out.reported.append(usage is not None)
                out.counted.append(counted)
                usage = None
            messages.append((event.seq, count_message(tokenizer, event.data)))
    return out


def charts_available() -> bool:
    """Whether matplotlib (the ``charts`` extra) can be imported."""
    return importlib.util.find_spec("matplotlib") is not None


def plot_series(series: RequestSeries, path: Path, *, window: int, title: str) -> Path:
    """Draw the series to a PNG at `path`, compactions marked, the window drawn.

    Raises:
        ConfigError: matplotlib is not installed (the ``charts`` extra).
    """
    if not charts_available():
        raise ConfigError(CHARTS_MISSING)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(10, 4.8))
    calls = list(range(1, len(series.sizes) + 1))
    sizes = series.plotted()
    ax.plot(calls, sizes, color="tab:blue", linewidth=1.2, label="request size")
    counted = [i for i, r in enumerate(series.reported) if not r]
    if series.reported_calls and counted:
        ax.scatter(
            [calls[i] for i in counted],
            [sizes[i] for i in counted],
            s=8,
            color="tab:orange",
            label=f"counted (no report), scaled x{series.scale() or 1:.2f} to the provider's",
        )
    ax.axhline(window, color="tab:red", linestyle="--", linewidth=1, label=f"window ({window:,})")
    for n, i in enumerate(series.compactions):
        ax.axvline(
            i + 1,
            color="tab:gray",
            linestyle=":",
            linewidth=1,
            label="compaction" if n == 0 else None,
        )
    source = "usage/report" if series.reported_calls == len(series.sizes) else "counted"
    if 0 < series.reported_calls < len(series.sizes):
        source = "usage/report where present, else counted"
    ax.set_xlabel("model call")
    ax.set_ylabel("request tokens")
    ax.set_title(f"{title}: request size per model call ({source})", fontsize=10)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_ylim(0, max([window, *sizes]) * 1.08)
    ax.legend(loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
