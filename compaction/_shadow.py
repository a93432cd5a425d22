"""The toolkit's top-level `prompts` package, checked to be the one Python would import.

The project's layout is `compaction/` and `prompts/` side by side, and ``prompts.py`` is the most
common file name in LLM apps: a user's ``prompts.py`` (or ``prompts/`` package) earlier on
`sys.path` would hide the toolkit's and break it far from the cause (``cannot import name 'Mode'
from 'prompts'``). Importing `compaction` (and so `harness` and the integrations) asks the import
system where ``prompts`` comes from, without importing it, and refuses a stranger at once.

Invariants: nothing is imported by the check; a ``prompts`` found anywhere but beside this
package (a module, a package, or a folder without ``__init__.py`` that wins) raises
`ShadowedModuleError` naming the file; a missing ``prompts`` is not this check's business (the
import that needs it says so).
"""

from __future__ import annotations

import os
import sys

PACKAGE = "prompts"
"""The top-level name another module may shadow."""


def shadowing_file(package: str = PACKAGE) -> str | None:
    """Return the file a stranger module named `package` is found at, or None when it is ours."""
    ours = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), package)
    module = sys.modules.get(package)
    origin = getattr(module, "__file__", None) if module is not None else _origin(package)
    if origin is None:
        return None
    if os.path.realpath(origin).startswith(os.path.realpath(ours) + os.sep):
        return None
    return str(origin)


def _origin(package: str) -> str | None:
    """Return where the import system would load top-level `package` from (None: nowhere)."""
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        spec = find_spec(package, None) if find_spec is not None else None
        if spec is None:
            continue
        if spec.has_location:
            return str(spec.origin)
        # A folder without __init__.py (a namespace package) wins where ours is not on sys.path
        # itself (an editable install): name the folder.
        return next(iter(spec.submodule_search_locations or ()), None)
    return None


def check_prompts() -> None:
    """Raise `ShadowedModuleError` when another module named ``prompts`` hides the toolkit's."""
    found = shadowing_file()
    if found is not None:
        from compaction.errors import ShadowedModuleError

        raise ShadowedModuleError(PACKAGE, found)
