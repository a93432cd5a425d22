"""Secret redaction: no API key, token or password leaves through a message built from outside.

Invariants: `redact` removes every given secret (verbatim, in any letter case, and in base64 at
any byte alignment) and every ``Bearer <token>``, ``sk-...`` key, ``user:password@`` part of a
URL and ``password=...`` query or keyword value, whatever the text around them; it runs on every
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

_QUERY_PASSWORD = re.compile(r"(?i)([?&](?:password|passwd|pwd|sslpassword)=)[^&#\s]*")
"""``?password=...`` or ``&password=...`` in a URL's query."""

_KEYWORD_PASSWORD = re.compile(
    r"(?i)(?<![?&\w])((?:password|passwd|pwd|sslpassword)\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s'\"]+)"
)
"""libpq's keyword form, ``password=secret`` or ``password='a secret'``."""

_MIN_SECRET: Final = 4
_MIN_ENCODED: Final = 8
"""A base64 fragment shorter than this is not searched for (it would match ordinary words)."""


def redact_url(url: str) -> str:
    """Return a store URL (or libpq conninfo) with every password replaced by ``***``.

    Covers ``scheme://user:password@host``, ``?password=`` / ``&password=`` query values and
    the keyword form ``password=... host=...``; a URL without a password comes back unchanged.
    """
    text = _USERINFO.sub(lambda m: f"{m.group(1)}:{URL_PASSWORD}@", url)
    text = _QUERY_PASSWORD.sub(lambda m: f"{m.group(1)}{URL_PASSWORD}", text)
    return _KEYWORD_PASSWORD.sub(lambda m: f"{m.group(1)}{URL_PASSWORD}", text)


def passwords_in(url: str) -> list[str]:
    """Return the passwords a store URL or conninfo string holds (to redact them elsewhere)."""
    found = [m.group(0)[m.group(0).index(":") + 1 : -1] for m in _USERINFO.finditer(url)]
    found += [m.group(0).partition("=")[2] for m in _QUERY_PASSWORD.finditer(url)]
    found += [m.group(2).strip("'") for m in _KEYWORD_PASSWORD.finditer(url)]
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
    text = _QUERY_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return _KEYWORD_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}", text)


__all__ = [
    "REDACTED",
    "redact",
    "redact_url",
]
