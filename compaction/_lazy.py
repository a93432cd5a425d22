"""Lazy package roots: a public name is imported from its module on first use, and kept.

A root lists its names in ``_EXPORTS`` (name -> module) and takes its module ``__getattr__``
and ``__dir__`` from `lazy_root`, so importing the root loads no module it names until a name
is used (``import compaction`` loads no tokenizer, store or compactor). `compaction` and
`prompts` use it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping, Sequence


def lazy_root(
    package: str,
    exports: Mapping[str, str],
    namespace: MutableMapping[str, object],
    public: Sequence[str],
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """Return a root's module ``__getattr__`` and ``__dir__``.

    Args:
        package: the root's name, for the error of an unknown name.
        exports: public name -> the module that defines it.
        namespace: the root's ``globals()``, where a loaded name is kept.
        public: the root's ``__all__``.
    """

    def __getattr__(name: str) -> object:
        """Import a public name from its module on first use, and keep it."""
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        """List the module's attributes and every public name, loaded or not."""
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
