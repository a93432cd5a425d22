"""The importer table: every transcript format this toolkit reads, one entry each.

Adding a format is one `Importer` entry here (its name, label and loader); `FORMATS`,
`FORMAT_CHOICES`, `load` and the CLI's choices and help all come from this table. Teaching
``auto`` to recognise the new format is a rule in `compaction.importers._detect`.

Invariants: names are unique and never ``"auto"``; the table's order is the order formats are
listed in messages and ``--help``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from compaction.events import Event
from compaction.importers._claude_code import load_claude_code
from compaction.importers._codex import load_codex
from compaction.importers._gemini import load_gemini
from compaction.importers._import_report import ImportReport
from compaction.importers._openai_messages import load_openai
from compaction.importers._swe_agent import load_swe_agent
from compaction.tokens import Tokenizer

Format = str
"""A format's name: one of `FORMATS`."""

FormatChoice = str
"""A format's name, or ``"auto"``: one of `FORMAT_CHOICES`."""


class Loader(Protocol):
    """Streams the session events of one transcript file, filling `report` as it goes."""

    def __call__(
        self, path: Path, report: ImportReport, tokenizer: Tokenizer, *, strict: bool
    ) -> Iterator[Event]:
        """Yield the events, seqs from 1; raise `TranscriptError` on what it cannot read."""
        ...


@dataclass(frozen=True)
class Importer:
    """One transcript format: its name on the command line, its label, its loader."""

    name: str
    """The name ``harness import NAME`` takes, e.g. ``claude-code``."""
    label: str
    """What the format is called in help, e.g. ``Claude Code``."""
    load: Loader
    """The loader."""


IMPORTERS: Final[tuple[Importer, ...]] = (
    Importer("claude-code", "Claude Code", load_claude_code),
    Importer("codex", "Codex", load_codex),
    Importer("gemini", "Gemini CLI", load_gemini),
    Importer("openai", "OpenAI", load_openai),
    Importer("swe-agent", "SWE-agent", load_swe_agent),
)
"""Every format, in the order they are listed."""

FORMATS: Final[tuple[Format, ...]] = tuple(i.name for i in IMPORTERS)
"""The formats an importer exists for."""

FORMAT_CHOICES: Final[tuple[FormatChoice, ...]] = ("auto", *FORMATS)
"""What ``harness import`` takes: ``auto`` or a format."""

LABELS: Final = ", ".join(i.label for i in IMPORTERS)
"""The formats' labels, for help texts."""


def importer(name: str) -> Importer:
    """Return the table entry of a format name (not ``"auto"``).

    Raises:
        KeyError: no importer has that name.
    """
    for entry in IMPORTERS:
        if entry.name == name:
            return entry
    raise KeyError(name)
