"""Reading an agent's transcript incrementally: only the records that matter, cached by offset.

A hook runs inside the agent, so its read is bounded. A transcript is append-only, so the
records that can change the open items (the todo tool's calls, the task tools' calls and
results, the agent's compactions) are picked out of the lines past the cached offset by the
agent's `needles`, kept in a cache file with the offset they reach, and the kept lines alone are
read through `compaction.importers`. The next run reads only what was appended since.

Invariants: the cache is used only when the file is the same file (device, inode) and its first
bytes are unchanged and it has not shrunk; otherwise the file is read again from the start. Only
complete lines (ending in a newline) are consumed; the cache is written atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compaction.importers import load
from harness.hooks._fold import Fold, fold

HEAD_BYTES = 4096
"""How many first bytes identify a transcript (a rewritten file has other ones)."""

_CALL_ID = re.compile(rb'"(?:id|call_id)"\s*:\s*"([^"]{1,200})"')
"""A call id in a picked line: the result that answers it is picked too."""

_ANSWER_ID = re.compile(rb'"(?:tool_use_id|call_id)"\s*:\s*"([^"]{1,200})"')
"""The call id a result line answers."""

MAX_LINE = 64 * 1024 * 1024
"""A longer line is skipped unread (a hook never holds a huge record in memory)."""


class ByteEstimate:
    """A tokenizer of about four bytes a token, so a hook never pays for loading an encoding."""

    name = "estimate:4-bytes"

    def count(self, text: str) -> int:
        """Return the estimate for `text`."""
        return len(text.encode("utf-8", "replace")) // 4

    def encode(self, text: str) -> list[int]:
        """Return placeholder ids, as many as `count`."""
        return [0] * self.count(text)


@dataclass(frozen=True)
class Picked:
    """The records of a transcript that matter, and how far the file was read."""

    lines: tuple[bytes, ...]
    offset: int
    read: int
    """Bytes read by this run (0 when the cache covered the whole file)."""


def _identity(path: Path) -> tuple[str, str]:
    stat = path.stat()
    with open(path, "rb") as fh:
        head = fh.read(HEAD_BYTES)
    return f"{stat.st_dev}:{stat.st_ino}", hashlib.sha256(head).hexdigest()


def _cache_file(cache_dir: Path, path: Path) -> Path:
    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    return cache_dir / f"{key}.json"


def _cached(
    cache: Path, identity: tuple[str, str], size: int
) -> tuple[list[bytes], set[bytes], int]:
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [], set(), 0
    same = [data.get("file"), data.get("head")] == list(identity)
    if not same or not isinstance(data.get("offset"), int) or data["offset"] > size:
        return [], set(), 0
    lines = [line.encode() for line in data.get("lines", [])]
    return lines, {i.encode() for i in data.get("ids", [])}, data["offset"]


def _wanted(line: bytes, needles: Sequence[bytes], ids: set[bytes]) -> bool:
    """Tell whether a line matters: it holds a needle, or answers a call of a picked line."""
    if any(n in line for n in needles):
        ids.update(_CALL_ID.findall(line))
        return True
    return any(m in ids for m in _ANSWER_ID.findall(line)) if ids else False


def pick(path: Path, needles: Sequence[bytes], cache_dir: Path | None) -> Picked:
    """Return the transcript's lines that matter (and its first line), reading from the cache.

    Raises:
        OSError: the transcript cannot be read.
    """
    identity = _identity(path)
    size = path.stat().st_size
    cache = _cache_file(cache_dir, path) if cache_dir is not None else None
    lines, ids, offset = _cached(cache, identity, size) if cache is not None else ([], set(), 0)
    start = offset
    with open(path, "rb") as fh:
        fh.seek(offset)
        while True:
            line = fh.readline(MAX_LINE)
            if not line.endswith(b"\n"):
                if len(line) < MAX_LINE:
                    break
                fh.readline()  # the rest of an over-long line, dropped
                offset = fh.tell()
                continue
            if offset == 0 or _wanted(line, needles, ids):
                lines.append(line)
            offset += len(line)
    if cache is not None and offset != start:
        _store(cache, identity, (lines, ids), offset)
    return Picked(tuple(lines), offset, offset - start)


def _store(
    cache: Path, identity: tuple[str, str], kept: tuple[list[bytes], set[bytes]], offset: int
) -> None:
    """Write the cache atomically; a cache that cannot be written is only a slower next run."""
    data = {
        "file": identity[0],
        "head": identity[1],
        "offset": offset,
        "lines": [line.decode("utf-8", "replace") for line in kept[0]],
        "ids": sorted(i.decode("utf-8", "replace") for i in kept[1]),
    }
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", dir=cache.parent, suffix=".tmp", delete=False, encoding="utf-8"
        ) as fh:
            json.dump(data, fh)
        os.replace(fh.name, cache)
    except OSError:
        return


def fold_lines(lines: Sequence[bytes], format: str, suffix: str) -> Fold:
    """Fold the picked lines through the format's importer (they are written to a temp file)."""
    with tempfile.TemporaryDirectory(prefix="harness-hook-") as folder:
        part = Path(folder) / f"picked{suffix}"
        part.write_bytes(b"".join(lines))
        return fold(load(part, format, tokenizer=ByteEstimate()))


def fold_transcript(
    path: Path, format: str, needles: Sequence[bytes], cache_dir: Path | None
) -> tuple[Fold, Picked]:
    """Fold the transcript at `path` (incrementally when `cache_dir` holds an earlier read)."""
    picked = pick(path, needles, cache_dir)
    return fold_lines(picked.lines, format, path.suffix), picked
