"""Entry formats of the narrative: one macro each, in ``compaction/templates/extractive.md.j2``.

Every entry a summarizer or an output check writes (a request, an edited file, a failure, a Next
Step) is formatted here, so the text a model reads has one home.

Invariants: an entry is a pure function of its values; `clip_at_clause` cuts inside a word
only when the head holds no space at all.
"""

from __future__ import annotations

import re
from functools import cache

from jinja2.environment import TemplateModule

from compaction.checkpoint import template_environment


@cache
def _macros() -> TemplateModule:
    return template_environment().get_template("extractive.md.j2").module


def entry(kind: str, **values: object) -> str:
    """Format one entry with the macro `kind` of ``compaction/templates/extractive.md.j2``."""
    return str(getattr(_macros(), kind)(**values))


def clip(text: str, limit: int) -> str:
    """Return `text`, or its head and how many characters were left out."""
    if len(text) <= limit:
        return text
    return entry("truncated", head=text[:limit].rstrip(), omitted=len(text) - limit)


_SENTENCE_END = re.compile(r"[.!?;:](?=\s|$)")
_CLAUSE_END = re.compile("[,)\\]](?=\\s)|\\s[-\u2013\u2014](?=\\s)")
_SPACE = re.compile(r"\s")


def clip_at_clause(text: str, limit: int) -> str:
    """Return `text`, or its head cut at a sentence or clause end within `limit` characters.

    The cut falls after the last sentence end (``.``, ``!``, ``?``, ``;``, ``:``) in the
    head, else after the last clause end (``,``, ``)``, a dash), else at the last space
    (inside a word only when the head holds no space). A mark too early (in the head's first
    third) is passed over for a later kind of cut. How many characters were left out follows.
    """
    if len(text) <= limit:
        return text
    head = text[:limit]
    floor = limit // 3
    for pattern in (_SENTENCE_END, _CLAUSE_END, _SPACE):
        ends = [m.end() for m in pattern.finditer(head) if m.end() > floor]
        if ends:
            head = head[: ends[-1]]
            break
    head = head.rstrip()
    return entry("truncated", head=head, omitted=len(text) - len(head))
