"""Secret redaction: no API key or bearer token leaves through a message built from outside text.

Invariants: `redact` removes every given secret verbatim and every ``Bearer <token>``,
``sk-...`` key and ``user:password@`` part of a URL, whatever the text around them; it runs on
every message built from a server's answer before the message reaches an error, an event or
the screen.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[REDACTED]"
"""What a secret is replaced with."""

_PATTERNS = (
    re.compile(r"(?i)(bearer|basic)\s+[^\s\"',;]+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)(x-api-key|api[_-]?key|authorization)([\"']?\s*[:=]\s*[\"']?)[^\s\"',;]+"),
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+@"),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Return `text` with the given secrets and anything shaped like a token replaced.

    Args:
        text: a message that may quote a server's answer or a request header.
        secrets: exact values to remove (e.g. the API key); values shorter than 4 characters
            are ignored (they would blank ordinary words).
    """
    for secret in sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
        stripped = secret.strip()
        if len(stripped) >= 4 and stripped != secret:
            text = text.replace(stripped, REDACTED)
    text = _PATTERNS[0].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _PATTERNS[1].sub(f"sk-{REDACTED}", text)
    text = _PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _PATTERNS[3].sub(f"{REDACTED}@", text)
