"""The public API of `compaction.backends` is complete, and importing it never loads httpx.

Which names it exports is derived in `tests/test_subpackage_api.py` (what callers outside use).
"""

from __future__ import annotations

import subprocess
import sys

import compaction.backends as backends


def test_public_names_are_exported() -> None:
    """Every name the root holds (loaded on first use) is listed in __all__, and no other."""
    for name in backends.__all__:
        assert getattr(backends, name) is not None, name
    public = {n for n in vars(backends) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(backends, n)).__name__ == "module"}
    assert public - modules - {"annotations"} == set(backends.__all__)


def test_import_loads_no_httpx() -> None:
    """The packages and the backends import without the llm extra: httpx loads on use."""
    code = "import compaction, compaction.backends, prompts, sys; print('httpx' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "False"
