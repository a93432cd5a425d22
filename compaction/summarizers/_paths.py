"""File paths in a span: which tokens are paths, and how Files and Code shows them.

Invariants: a path is shown relative to the working directory only when it lies exactly under
it (component by component, never by suffix); outside it a path stays absolute, with the home
directory written ``~``.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Final

_PATH_TOKEN = re.compile(r"[\w~./-]*[./][\w~./-]*\w")
_KNOWN_EXTENSIONS: Final = frozenset(
    (
        *("py", "pyi", "md", "rst", "txt", "toml", "yaml", "yml", "json", "jsonl", "cfg", "ini"),
        *("lock", "sh", "bash", "js", "mjs", "ts", "tsx", "jsx", "css", "html", "rs", "go", "c"),
        *("h", "cc", "cpp", "hpp", "java", "kt", "rb", "php", "sql", "csv", "ipynb", "j2", "tf"),
        *("proto", "xml", "mod", "sum"),
    )
)


_SPACE = re.compile(r"\s")
"""Any whitespace character (the same characters as `str.isspace`), found in one C scan."""


def looks_like_path(token: str) -> bool:
    """Tell whether a token reads as a file path (has a slash, or a known file extension)."""
    token = token.rstrip(".")
    if (
        not token
        or len(token) > 200
        or token.startswith("//")
        or _SPACE.search(token)
        or (".." in token and ".." in token.replace("../", ""))
    ):
        return False
    last = token.rsplit("/", 1)[-1]
    ext = last.rsplit(".", 1)[-1].lower() if "." in last.strip(".") else ""
    if "/" in token:
        rooted = token.startswith(("/", "./", "../", "~/"))
        return (rooted and len(token) > 2) or ext in _KNOWN_EXTENSIONS
    return ext in _KNOWN_EXTENSIONS and len(last) > len(ext) + 1


def find_paths(text: str) -> Iterator[str]:
    """Yield the file paths mentioned in `text`, in order of appearance."""
    for match in _PATH_TOKEN.finditer(text):
        start = match.start()
        if start >= 3 and text[start - 3 : start] == "://":
            continue
        token = match.group().rstrip(".")
        if looks_like_path(token):
            yield token


def dedupe(paths: Iterable[str]) -> list[str]:
    """Return the paths once each, in order of first appearance."""
    return list(dict.fromkeys(paths))


def working_directory(absolute: Sequence[str], relative: Sequence[str]) -> str:
    """Infer the working directory: the root an absolute path has in front of a relative one.

    Without such a pair, the deepest directory shared by every absolute path (when it is more
    than one level deep). Empty when nothing says. Used only when the log records no ``cwd``.
    """
    roots: Counter[str] = Counter()
    rel = {r.removeprefix("./") for r in relative if not r.startswith(("/", "~"))}
    for path in absolute:
        if not path.startswith("/"):
            continue
        parts = path.split("/")
        for i in range(2, len(parts) - 1):
            if "/".join(parts[i:]) in rel:
                roots["/".join(parts[:i])] += 1
                break
    if roots:
        # The root most absolute paths lie under (then the shortest): one root for the span.
        return min(roots, key=lambda r: (-sum(p.startswith(r + "/") for p in absolute), len(r)))
    rooted = [p for p in absolute if p.startswith("/")]
    if not rooted:
        return ""
    common = posixpath.commonpath(rooted) if len(rooted) > 1 else posixpath.dirname(rooted[0])
    return common if common.count("/") >= 2 else ""


_HOME = re.compile(r"^(?:/Users/[^/]+|/home/[^/]+|/root)(?=/|$)")


def home_of(path: str) -> str:
    """Return the home directory `path` lies in (``/Users/x``, ``/home/x``, ``/root``) or ``""``."""
    match = _HOME.match(path)
    return match.group() if match else ""


def normalise(path: str, root: str, home: str = "") -> str:
    """Return how Files and Code shows `path`, given the working directory `root`.

    Under `root` (exactly: ``root`` then ``/``), the path relative to it; a relative path is
    taken as relative to it already; any other absolute path stays absolute, except that a path
    in `home` is written ``~/...``. Never a ``./`` prefix.
    """
    if not path:
        return path
    clean = posixpath.normpath(path) if not path.startswith("//") else path
    root = posixpath.normpath(root) if root else ""
    if root and root != "/" and clean.startswith(root + "/"):
        clean = clean[len(root) + 1 :]
    elif home and (clean == home or clean.startswith(home + "/")):
        clean = "~" + clean[len(home) :]
    return clean.removeprefix("./")
