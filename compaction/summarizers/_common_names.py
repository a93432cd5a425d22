"""Names every project of a language uses: Key Technical Concepts ranks them last.

A concept is worth its line when it belongs to the project (``SessionLog``, ``maxSessionCheck``);
``fmt.Errorf`` or ``t.Fatalf`` occur in every Go project and tell a model nothing. A term is
*common* when it is one of `COMMON_NAMES`, or a dotted name whose first part is one of a
language's standard packages or test helpers (`COMMON_PREFIXES`). The lists are small on
purpose: the standard library and test helpers seen most in real sessions, per language.

Invariants: `is_common` is a pure function of the term; the lists only down-rank, never drop.
"""

from __future__ import annotations

from typing import Final

COMMON_PREFIXES: Final[dict[str, frozenset[str]]] = {
    "go": frozenset(
        (
            *("fmt", "strings", "errors", "os", "filepath", "strconv", "time", "context"),
            *("io", "bytes", "sort", "sync", "http", "log", "slog", "exec", "json"),
            *("t", "b", "require", "assert", "testing"),
        )
    ),
    "python": frozenset(
        (
            *("os", "sys", "re", "json", "typing", "pathlib", "logging", "subprocess"),
            *("datetime", "collections", "functools", "itertools", "dataclasses", "pytest"),
            *("self.assert", "unittest", "mock"),
        )
    ),
    "javascript": frozenset(
        ("console", "JSON", "Object", "Array", "Promise", "Math", "process", "document")
    ),
    "rust": frozenset(("std", "Vec", "String", "Option", "Result", "Box")),
}
"""Per language: packages and test helpers whose dotted names (``fmt.Errorf``) are common."""

COMMON_NAMES: Final[frozenset[str]] = frozenset(
    (
        *("__init__", "__name__", "__main__", "__future__", "__all__", "self"),
        *("useState", "useEffect", "toString", "forEach", "setTimeout", "addEventListener"),
        *("NoError", "TestMain", "ctx", "err"),
    )
)
"""Whole names common to every project of their language."""

_PREFIXES: Final = frozenset().union(*COMMON_PREFIXES.values())


def is_common(term: str) -> bool:
    """Tell whether a term is common to every project of its language (see the module)."""
    if term in COMMON_NAMES:
        return True
    head = term.split(".", 1)[0]
    if "." in term and head in _PREFIXES:
        return True
    return term.startswith("self.assert")
