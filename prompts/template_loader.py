"""The template loader: regular files resolving inside the allowed template folders, no others.

Invariants: a template reads no file outside its template folders and the built-in templates:
``..``, absolute names and symlinks that point out are refused with a `ConfigError` naming the
file; so are a file that is not regular, not UTF-8, or over ``max_template_bytes``.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
from jinja2.loaders import split_template_path

from compaction.errors import ConfigError
from prompts.render_budget import LIMITS


@dataclass(frozen=True)
class ConfinedLoader(jinja2.BaseLoader):
    """Loads templates from `folders` in order; each file must resolve inside `allowed`.

    Args:
        folders: where names are looked up, first match wins.
        allowed: the folders a template file may resolve into (symlinks followed).
    """

    folders: tuple[Path, ...]
    allowed: tuple[Path, ...] = field(default=())

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        """Return the source of `template`, refusing files outside the allowed folders."""
        pieces = split_template_path(template)
        for folder in self.folders:
            candidate = folder.joinpath(*pieces)
            if not (candidate.exists() or candidate.is_symlink()):
                continue
            return self._read(candidate)
        raise jinja2.TemplateNotFound(template)

    def _read(self, candidate: Path) -> tuple[str, str, Callable[[], bool]]:
        resolved = candidate.resolve()
        roots = self.allowed or self.folders
        if not any(resolved.is_relative_to(root.resolve()) for root in roots):
            shown = ", ".join(str(r) for r in roots)
            raise ConfigError(
                f"template {candidate} resolves to {resolved}, outside the template folders "
                f"({shown}); templates may only include files inside them"
            )
        try:
            info = resolved.stat()
        except OSError as exc:
            raise ConfigError(f"cannot read template {candidate}: {exc.strerror}") from None
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"template {candidate} is not a regular file")
        if info.st_size > LIMITS.max_template_bytes:
            raise ConfigError(
                f"template {candidate} has {info.st_size} bytes, above the limit of "
                f"{LIMITS.max_template_bytes}"
            )
        try:
            source = resolved.read_bytes()[: LIMITS.max_template_bytes + 1].decode("utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read template {candidate}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"template {candidate} is not UTF-8: {exc.reason}") from None
        mtime = info.st_mtime_ns

        def uptodate() -> bool:
            try:
                return resolved.stat().st_mtime_ns == mtime
            except OSError:
                return False

        return source, str(candidate), uptodate
