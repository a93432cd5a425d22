"""Secret redaction: no API key, token or password leaves through a message built from outside.

Invariants: `redact` removes every given secret (verbatim, in any letter case, and in base64 at
any byte alignment) and every ``Bearer <token>``, ``sk-...`` key, ``user:password@`` part of a
URL and password query or keyword value (every name in `PASSWORD_KEYS`, in any letter case; a
query's names percent-decoded first), whatever the text around them; it runs on every
message built from a server's answer before the message reaches an error, an event or the
screen. `redact_url` is the one function that makes a store URL printable: every command that
shows a URL shows it through it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import unquote

REDACTED: Final = "[REDACTED]"
"""What a secret is replaced with."""

URL_PASSWORD: Final = "***"
"""What a password inside a store URL is replaced with (the rest of the URL stays readable)."""

_PATTERNS = (
    re.compile(r"(?i)(bearer|basic)\s+[^\s\"',;]+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)(x-api-key|api[_-]?key|authorization)([\"']?\s*[:=]\s*[\"']?)[^\s\"',;]+"),
)

_USERINFO = re.compile(r"(?<=://)([^/\s:@?#]*):[^/\s]*@")
"""``user:password@`` after a scheme; greedy up to the authority's last ``@`` (``p@ss`` too)."""

PASSWORD_KEYS: Final = frozenset({"password", "passwd", "pwd", "sslpassword"})
"""Parameter names whose value is a password (any letter case): libpq's ``password`` and
``sslpassword``, and the ``pwd`` / ``passwd`` other drivers take."""

_QUERY_PASSWORD = re.compile(r"([?&])([^=&#\s]+=)([^&#\s]*)")
"""A parameter of a URL's query; its value is a password when its name, percent-decoded (libpq
decodes a URI's parameter names too: ``?pass%77ord=``), is one of `PASSWORD_KEYS`."""

_KEYWORD_PASSWORD = re.compile(
    r"(?i)(?<![?&\w%])((?:password|passwd|pwd|sslpassword)\s*=\s*)"
    r"('(?:[^'\\]|\\.)*'?|\"[^\"]*\"?|[^\s'\"]\S*)"
)
"""libpq's keyword form, ``password=secret``, ``password='a secret'`` (or double-quoted, which
libpq takes as part of the value)."""

_MIN_SECRET: Final = 4
_MIN_ENCODED: Final = 8
"""A base64 fragment shorter than this is not searched for (it would match ordinary words)."""


def redact_url(url: str) -> str:
    """Return a store URL (or libpq conninfo) with every password replaced by ``***``.

    Covers ``scheme://user:password@host``, ``?password=`` / ``&password=`` query values and
    the keyword form ``password=... host=...``; a URL without a password comes back unchanged.
    """
    text = _USERINFO.sub(lambda m: f"{m.group(1)}:{URL_PASSWORD}@", url)
    text = _QUERY_PASSWORD.sub(lambda m: _query_value(m, URL_PASSWORD), text)
    return _KEYWORD_PASSWORD.sub(lambda m: f"{m.group(1)}{URL_PASSWORD}", text)


def _is_password_param(match: re.Match[str]) -> bool:
    """Tell whether a query parameter's name, percent-decoded, names a password."""
    return unquote(match.group(2)[:-1]).strip().lower() in PASSWORD_KEYS


def _query_value(match: re.Match[str], shown: str) -> str:
    """Return a query parameter with its value replaced by `shown` when it is a password."""
    if not _is_password_param(match):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}{shown}"


def passwords_in(url: str) -> list[str]:
    """Return the passwords a store URL or conninfo string holds (to redact them elsewhere)."""
    found = [m.group(0)[m.group(0).index(":") + 1 : -1] for m in _USERINFO.finditer(url)]
    found += [m.group(3) for m in _QUERY_PASSWORD.finditer(url) if _is_password_param(m)]
    found += [m.group(2).strip("'\"") for m in _KEYWORD_PASSWORD.finditer(url)]
    found += [unquote(p) for p in found]
    return [p for p in found if p]


def encoded_forms(secret: str) -> set[str]:
    """Return the base64 fragments that appear wherever `secret`'s bytes are base64-encoded.

    A secret inside a longer encoded value (``Basic base64(user:key)``) starts at any of three
    byte alignments; for each, the characters fully determined by the secret's own bits are
    the same whatever surrounds it. Standard and URL-safe alphabets both count.
    """
    raw = secret.encode("utf-8", "surrogatepass")
    forms: set[str] = set()
    for k in range(3):
        encoded = base64.b64encode(b"\0" * k + raw).decode("ascii")
        start, stop = -(-8 * k // 6), 8 * (k + len(raw)) // 6
        forms.add(encoded[start:stop])
        if k == 0:
            forms.add(encoded.rstrip("="))
    forms |= {f.replace("+", "-").replace("/", "_") for f in forms}
    return {f for f in forms if len(f) >= _MIN_ENCODED}


def _remove_secret(text: str, secret: str) -> str:
    for value in {secret, secret.strip()}:
        if len(value) < _MIN_SECRET:
            continue
        text = re.sub(re.escape(value), REDACTED, text, flags=re.IGNORECASE)
        for form in sorted(encoded_forms(value), key=len, reverse=True):
            text = text.replace(form, REDACTED)
    return text


def holds_secret(text: str, secret: str) -> bool:
    """Tell whether `text` holds `secret` in any form `redact` removes, or base64 of it re-cased.

    The secret verbatim in any letter case, or base64-encoded (at any byte alignment, either
    alphabet) as given or in upper, lower or swapped case. A secret shorter than 4 characters
    is never found (it would match ordinary words).
    """
    value = secret.strip()
    if len(value) < _MIN_SECRET:
        return False
    if value.casefold() in text.casefold():
        return True
    cased = {value, value.upper(), value.lower(), value.swapcase()}
    return any(form in text for each in cased for form in encoded_forms(each))


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Return `text` with the given secrets and anything shaped like a token replaced.

    Args:
        text: a message that may quote a server's answer, a request header or a store URL.
        secrets: exact values to remove (e.g. the API key), also in any letter case and in
            base64; values shorter than 4 characters are ignored (they would blank ordinary
            words).
    """
    for secret in sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True):
        text = _remove_secret(text, secret)
    text = _PATTERNS[0].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _PATTERNS[1].sub(f"sk-{REDACTED}", text)
    text = _PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _USERINFO.sub(f"{REDACTED}@", text)
    text = _QUERY_PASSWORD.sub(lambda m: _query_value(m, REDACTED), text)
    return _KEYWORD_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}", text)


__all__ = [
    "PASSWORD_KEYS",
    "REDACTED",
    "holds_secret",
    "redact",
    "redact_url",
]
