"""Check JSON data against the official SDKs' request TypedDicts, strictly.

pydantic validates the SDKs' ``Iterable[...]`` fields lazily (and pydantic-core panics on some
nested lazy unions), and it drops unknown keys silently; so this walks the TypedDicts' type hints
itself: every required key present, no unknown key at any level, every value of its type.
"""

from __future__ import annotations

import collections.abc as cabc
import types
import typing
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin, get_type_hints

from typing_extensions import is_typeddict


def problems(tp: Any, value: Any, path: str = "$") -> list[str]:
    """Return what is wrong with `value` as an instance of the type `tp` (empty when valid)."""
    origin = get_origin(tp)
    if tp is Any or tp is object:
        return []
    if origin is typing.Annotated:
        return problems(get_args(tp)[0], value, path)
    if origin in (Union, types.UnionType):
        results = [problems(arg, value, path) for arg in get_args(tp)]
        if any(not r for r in results):
            return []
        every = " | ".join("; ".join(r) for r in results)
        return [f"{path}: fits no member of the union: {every}"]
    if origin is Literal:
        return [] if value in get_args(tp) else [f"{path}: {value!r} is not one of {get_args(tp)}"]
    if tp is type(None):
        return [] if value is None else [f"{path}: expected null"]
    if is_typeddict(tp):
        return _typeddict(tp, value, path)
    if origin in (cabc.Iterable, cabc.Sequence, list):
        if not isinstance(value, list):
            return [f"{path}: expected an array"]
        (item,) = get_args(tp) or (Any,)
        return [p for i, v in enumerate(value) for p in problems(item, v, f"{path}[{i}]")]
    if origin in (dict, cabc.Mapping) or tp is dict:
        return [] if isinstance(value, dict) else [f"{path}: expected an object"]
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected a number"]
    if isinstance(tp, type):
        ok = isinstance(value, tp) and (tp is bool or not isinstance(value, bool))
        return [] if ok else [f"{path}: expected {tp.__name__}, got {type(value).__name__}"]
    if isinstance(origin, type):  # e.g. IO[bytes]: JSON data is never one
        return [] if isinstance(value, origin) else [f"{path}: expected {origin.__name__}"]
    raise TypeError(f"{path}: cannot check against {tp!r}")


def _typeddict(tp: Any, value: Any, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: expected an object ({tp.__name__})"]
    hints = get_type_hints(tp)
    out = [f"{path}: unknown key {k!r} for {tp.__name__}" for k in value if k not in hints]
    out += [f"{path}: missing {k!r} for {tp.__name__}" for k in _required(tp) - set(value)]
    for key, item in value.items():
        if key in hints:
            out += problems(hints[key], item, f"{path}.{key}")
    return out


def _required(tp: Any) -> set[str]:
    """Return the required keys, reading `Required[...]` even from string annotations."""
    required = set(tp.__required_keys__)
    for key, hint in get_type_hints(tp, include_extras=True).items():
        origin = get_origin(hint)
        if origin is Required:
            required.add(key)
        elif origin is NotRequired:
            required.discard(key)
    return required
