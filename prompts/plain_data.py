"""What may cross into a template: plain data only.

Invariants: templates see strings, numbers, booleans, None, and lists, tuples and dicts (with
string keys) of those; never a path, a model object or a callable (`check_plain` names the
first value that is not, by its place in the data).
"""

from __future__ import annotations

PLAIN_SCALARS = (str, int, float, bool, type(None))


def check_plain(value: object, where: str = "context") -> None:
    """Raise TypeError unless `value` is plain data (str, numbers, bool, None, lists, dicts).

    Templates are untrusted: a path, a model object or a callable handed to one exposes its
    methods (``path.read_text()``); only plain values cross into a template.
    """
    stack: list[tuple[str, object]] = [(where, value)]
    while stack:
        at, item = stack.pop()
        if type(item) in PLAIN_SCALARS:
            continue
        if type(item) in (list, tuple):
            assert isinstance(item, list | tuple)
            stack.extend((f"{at}[{i}]", v) for i, v in enumerate(item))
        elif type(item) is dict:
            assert isinstance(item, dict)
            for k, v in item.items():
                if type(k) is not str:
                    raise TypeError(f"template data {at}: key {k!r} is not a string")
                stack.append((f"{at}.{k}", v))
        else:
            raise TypeError(
                f"template data {at} is a {type(item).__name__}; templates receive plain data "
                "only (str, int, float, bool, None, lists and dicts of those)"
            )
