"""The public API of `compaction`: sorted, complete, importable, read from the root's own table.

The lists are derived from the code (`__all__`, the lazy root's ``_EXPORTS``), never retyped here;
`tests/test_subpackage_api.py` checks that every sub-package root exports only what callers
outside it use.
"""

from __future__ import annotations

import importlib

import compaction


def test_all_is_sorted_and_unique() -> None:
    """__all__ is sorted (ruff's order: constants, classes, functions) and has no repeats."""
    names = compaction.__all__
    assert len(names) == len(set(names))

    def key(name: str) -> tuple[int, str]:
        kind = 0 if name.isupper() else 1 if name[0].isupper() else 2
        return kind, name

    assert names == sorted(names, key=key)


def test_every_name_importable() -> None:
    """Every name in __all__ is an attribute of the package, reachable by from-import."""
    module = importlib.import_module("compaction")
    for name in compaction.__all__:
        assert getattr(module, name) is not None, name
    namespace: dict[str, object] = {}
    exec(f"from compaction import {', '.join(compaction.__all__)}", namespace)
    assert set(compaction.__all__) <= set(namespace)


def test_public_names_are_exported() -> None:
    """Every public name the package imports (other than submodules) is listed in __all__.

    The root loads its names on first use, so each is touched first; then nothing else is there.
    """
    for name in compaction.__all__:
        getattr(compaction, name)
    public = {n for n in vars(compaction) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(compaction, n)).__name__ == "module"}
    assert public - modules - {"annotations"} == set(compaction.__all__)


def test_root_lists_what_it_loads() -> None:
    """__all__ is exactly the names the root loads on first use: one list, read from the code."""
    exports: dict[str, str] = vars(compaction)["_EXPORTS"]
    assert set(compaction.__all__) == set(exports)


def test_each_name_loads_from_the_module_the_root_names() -> None:
    """Each name comes from the module (or room root) the root's table names for it."""
    exports: dict[str, str] = vars(compaction)["_EXPORTS"]
    for name, home in exports.items():
        assert getattr(compaction, name) is getattr(importlib.import_module(home), name), name


def test_provider_tool_shapes_live_in_prompts() -> None:
    """Compaction exports no provider tool shape: prompts.catalog owns them."""
    assert not {"openai_tool", "anthropic_tool", "todo_write"} & set(compaction.__all__)
