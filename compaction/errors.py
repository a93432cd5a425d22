"""The one exception tree of Context Harness.

Every error the toolkit raises derives from `HarnessError`, so a caller can catch them all at
once. Two kinds of failure are kept apart: a *model* that sent bad tool arguments gets a
`ToolInputError`, which is turned into a tool result the model reads and fixes; a *programmer or
file* that broke a rule gets one of the other errors, whose message names the file, the line and
the fix.

    HarnessError
     ├── ToolInputError          bad tool arguments from a model (becomes a tool result)
     ├── LogError                a session log could not be read or written
     │    ├── LogFormatError     a line that is not a valid event (names file and line)
     │    ├── LogIntegrityError  a durable rule of the log broke (rule, seq)
 │    └── SeqConflictError   an append expected another last seq (expected, current)
     ├── ConfigError             bad constructor or configuration values
     │    └── ShadowedModuleError  another module named ``prompts`` hides the toolkit's (file)
     ├── MessageError            a chat message (or an SDK's message object) was rejected (field)
     ├── TokenizerError          a tokenizer could not be loaded
     ├── TranscriptError         an agent transcript could not be imported (file, line)
     ├── CompactionError         a compaction attempt failed (code)
     └── ProviderError           a model provider's API call failed (code, status)
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal


class HarnessError(Exception):
    """Root of every error Context Harness raises."""


class ToolInputError(HarnessError):
    """A model sent arguments a tool cannot accept.

    The message is model-facing: short, stable, prefixed with the tool name, and lists every
    violation so the model can fix them all in one retry.
    """

    def __init__(self, tool: str, violations: list[str]) -> None:
        self.tool = tool
        self.violations = list(violations)
        super().__init__(render_violations(tool, self.violations))


def render_violations(tool: str, violations: list[str]) -> str:
    """Render violations as the text a model reads back as its tool result."""
    lines = [f"{tool}: rejected, nothing was changed. Fix the arguments and call again:"]
    lines += [f"- {v}" for v in violations]
    return "\n".join(lines)


class LogError(HarnessError):
    """A session log could not be read or written."""


SKIP_FIX = (
    "Fix or remove that line, or read with skip_bad_lines=True (CLI: --skip-bad) to count and "
    "skip it."
)
"""What a `LogFormatError` of a JSONL log tells the user to do."""


class LogFormatError(LogError):
    """A line of a log file (or a row of a database store) is not a valid event.

    `fix` is the advice that ends the message: by default how to skip the line, which a JSONL
    log allows; a database store, which never skips a row, says what to do instead.
    """

    def __init__(self, path: Path | str, line: int, reason: str, *, fix: str = SKIP_FIX) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{self.path}:{line}: {reason}. {fix}")


class LogIntegrityError(LogError):
    """A durable rule of the log broke on append or replay."""

    def __init__(self, rule: str, message: str, *, seq: int | None = None, path: str = "") -> None:
        self.rule = rule
        self.seq = seq
        self.path = path
        where = f"{path}: " if path else ""
        at = f" at seq {seq}" if seq is not None else ""
        super().__init__(f"{where}{rule}{at}: {message}")


class SeqConflictError(LogError):
    """An append said which seq it expected to follow, and the log had moved on.

    Optimistic concurrency: the caller read the log up to `expected`, another writer appended
    since, so nothing was written. Read again (the events after `expected`), then retry.
    """

    def __init__(self, where: str, expected: int, current: int) -> None:
        self.where = where
        self.expected = expected
        self.current = current
        super().__init__(
            f"{where}: append expected the last seq to be {expected}, but it is {current} "
            "(another writer appended); nothing was written: read the new events and retry"
        )


class ConfigError(HarnessError):
    """A constructor or configuration got values it cannot use."""


class ShadowedModuleError(ConfigError, ImportError):
    """Another module named like a toolkit package is found first (a user's ``prompts.py``).

    Also an `ImportError`, since the toolkit cannot be imported while it is there.
    """

    def __init__(self, package: str, found: str) -> None:
        self.package = package
        self.found = found
        super().__init__(
            f"{found} shadows Context Harness's {package!r} package (a module named {package!r} "
            f"earlier on sys.path); rename it, e.g. to my_{package}.py, or move it off sys.path"
        )


class MessageError(HarnessError):
    """A chat message handed to the session (a dict or an SDK object) cannot be recorded.

    Attributes:
        field: the offending field, as a path (``tool_calls[0].function.name``, ``role``).
        reason: what is wrong with it.
    """

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"message field {field}: {reason}")


class TokenizerError(HarnessError):
    """A tokenizer could not be loaded."""


class TranscriptError(HarnessError):
    """An agent transcript (Claude Code, Codex, ...) could not be imported.

    Raised for a file that cannot be read at all, a format that cannot be told, or, with
    ``strict=True``, the first line that would otherwise be counted and skipped.
    """

    def __init__(self, path: Path | str, line: int | None, reason: str, *, fix: str = "") -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}" + (f". {fix}" if fix else ""))


CompactionCode = Literal[
    "below_threshold",
    "nothing_to_compact",
    "no_safe_cut",
    "summarizer_failed",
    "bad_checkpoint",
    "vetoed",
    "conflict",
    "does_not_fit",
]


class CompactionError(HarnessError):
    """A compaction attempt failed.

    ``conflict`` is retryable: other writers kept appending while the checkpoint was computed,
    so none was written; calling `compact` again reads the new events and tries again.
    """

    def __init__(self, code: CompactionCode, message: str) -> None:
        self.code: CompactionCode = code
        super().__init__(f"{code}: {message}")

    @property
    def retryable(self) -> bool:
        """Whether the same call may succeed if made again (only for ``conflict``)."""
        return self.code == "conflict"


ProviderCode = Literal["timeout", "transport", "http_status", "bad_response", "retry_after"]


class ProviderError(HarnessError):
    """A call to a model provider's API failed, after any retries.

    Never shows an API key: the message names the endpoint, the status and what to check.
    """

    def __init__(self, code: ProviderCode, message: str, *, status: int | None = None) -> None:
        self.code: ProviderCode = code
        self.status = status
        super().__init__(f"{code}: {message}")
