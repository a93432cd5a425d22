r"""The Checkpoint: the fixed-template summary that replaces old turns in the model's context.

A Checkpoint has eight sections, always all present, always in this order, each rendered as a
level-two Markdown heading (`## Pending Jobs`) with ``(none)`` under it when empty:

1. Primary Request and Intent   5. Pending Jobs  (code-owned)
2. Key Technical Concepts       6. Current Work  (code-owned)
3. Files and Code               7. Next Step
4. Errors and Fixes             8. Critical Context

The six narrative sections are written by a summarizer. `Pending Jobs` and `Current Work` are
*code-owned*: the compactor copies them from the latest todo list and from the shared task list
(both may exist in one session), and no summarizer can touch them; Current Work also lists the
jobs still running (sub-agents and background commands, by id) and ends with the approved plan
(whole, or its headings and numbered steps and what else fits, with the seq that holds it).
`render_checkpoint()` lays a Checkpoint out with the jinja2 template
``compaction/templates/checkpoint.md.j2``; `parse_checkpoint()` reads the text back.

The lines are encoded so that no text can break the structure (`checkpoint_encoding`: an item
or a task is one JSON-escaped line, narrative lines that would read as structure are escaped);
the model is `checkpoint_model`, the parser `checkpoint_parser`; this module renders, and is the
one place the rest of the package imports the Checkpoint from.

An unfinished list from an earlier turn (written before the latest ``turn/start`` and not
rewritten since) is still the latest list: it is carried into Pending Jobs and Current Work, and
`carried_over` makes the template say so in a quoted note at the top of Pending Jobs.

Invariants: ``parse_checkpoint(render_checkpoint(c)) == c`` for every Checkpoint ``c``; every
rendered Checkpoint has the eight headings, once each, in order, and no other level-two heading.
"""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined, Template

from compaction.checkpoint._encoding import decode_item as decode_item
from compaction.checkpoint._encoding import decode_job as decode_job
from compaction.checkpoint._encoding import decode_plan as decode_plan
from compaction.checkpoint._encoding import decode_task as decode_task
from compaction.checkpoint._encoding import encode_item as encode_item
from compaction.checkpoint._encoding import encode_job as encode_job
from compaction.checkpoint._encoding import encode_plan as encode_plan
from compaction.checkpoint._encoding import encode_task as encode_task
from compaction.checkpoint._encoding import escape_narrative as escape_narrative
from compaction.checkpoint._encoding import unescape_narrative as unescape_narrative
from compaction.checkpoint._model import (
    CODE_OWNED_SECTIONS,
    NARRATIVE_SECTIONS,
    SECTION_NAMES,
    Checkpoint,
    Section,
)
from compaction.checkpoint._model import EMPTY as EMPTY
from compaction.checkpoint._model import FIELD_BY_SECTION as FIELD_BY_SECTION
from compaction.checkpoint._model import TASKS_BY_SECTION as TASKS_BY_SECTION
from compaction.checkpoint._parser import parse_checkpoint, split_sections


@cache
def template_environment() -> Environment:
    """Return the jinja2 environment of compaction's templates (strict, no autoescape)."""
    return Environment(
        loader=PackageLoader("compaction", "templates"),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@cache
def _template() -> Template:
    return template_environment().get_template("checkpoint.md.j2")


def render_checkpoint(checkpoint: Checkpoint) -> str:
    """Render a Checkpoint as Markdown: every section, in order, ``(none)`` when empty."""
    sections = []
    for name in SECTION_NAMES:
        value = checkpoint.section(name)
        if isinstance(value, tuple):
            lines = [encode_item(item) for item in value]
            lines += [encode_task(task) for task in checkpoint.tasks(name)]
            if name == Section.CURRENT_WORK:
                lines += carried_lines(checkpoint)
        else:
            lines = [escape_narrative(value)] if value else []
        carried = checkpoint.carried_over and name == CODE_OWNED_SECTIONS[0]
        sections.append({"name": str(name), "lines": lines, "carried": carried})
    return _template().render(sections=sections)


def carried_lines(checkpoint: Checkpoint) -> list[str]:
    """Return the lines Current Work ends with: the running jobs, then the approved plan."""
    lines = [encode_job(job) for job in checkpoint.jobs]
    return lines + (encode_plan(checkpoint.plan) if checkpoint.plan is not None else [])


__all__ = [
    "CODE_OWNED_SECTIONS",
    "NARRATIVE_SECTIONS",
    "SECTION_NAMES",
    "Checkpoint",
    "Section",
    "carried_lines",
    "parse_checkpoint",
    "render_checkpoint",
    "split_sections",
]
