"""The extras a command needs, named before it runs: one line and exit 2, never exit 4 later.

The README's first install (``pip install -e .``) has no extras; a command that needs one
(`harness bench` loads httpx through the LLM client; a provider backend posts with httpx) says
which extra to install before it does any work, instead of failing half way with an import error.
"""

from __future__ import annotations

import importlib
from typing import Final

EXTRAS: Final[dict[str, str]] = {
    "httpx": "llm",
    "matplotlib": "charts",
    "psycopg": "postgres",
    "agents": "agents",
    "langchain": "langchain",
}
"""Which extra installs each optional module."""


def require(module: str, what: str) -> None:
    """Import `module` now, or raise the one line that names its extra.

    Raises:
        ConfigError: the module is not installed (or cannot be imported).
    """
    try:
        importlib.import_module(module)
    except ImportError as exc:
        from compaction import ConfigError

        extra = EXTRAS.get(module, module)
        raise ConfigError(
            f"{what} needs {module}, which the {extra} extra installs: "
            f"pip install 'context-harness[{extra}]' (or -e '.[{extra}]' in a checkout) "
            f"({exc})"
        ) from None
