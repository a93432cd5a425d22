"""The one-line answer an adapter gives when its framework's extra is missing."""

from __future__ import annotations


def missing_extra(module: str, extra: str, package: str) -> str:
    """Return the one-line answer to a framework that is missing or too old for an adapter."""
    return f"harness.integrations.{module} needs {package}: pip install 'context-harness[{extra}]'"
