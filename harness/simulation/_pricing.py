"""Provider prices and what a session costs under each: tokens are not money.

The price table lives in ``harness/simulation/data/prices.json`` (package data: the demo prices
its sessions too) (USD per million tokens: input miss,
cache hit, cache write, output; with the model, the tier, the source page and the date it was
read). `session_cost` prices one session's requests under one provider: every request's input is
split into tokens the provider's cache served (``cache_hit``), tokens written to the cache
(``cache_write``: Anthropic writes every uncached token up to the request's last breakpoint, the
rolling one at its end, once the request reaches the model's minimum; DeepSeek and OpenAI bill a
write as a miss, so their uncached tokens are misses) and the rest (``input_miss``); output is the
tokens the model generated.

Invariants: a cost is a pure function of the table and the token counts; every input token falls
in exactly one of miss, hit and write.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from compaction import ConfigError, EventData, Message, Tokenizer
from prompts import dumps, openai_message

PRICES_PATH = Path(__file__).resolve().parent / "data" / "prices.json"
"""The committed price table."""
PRICES_FORMAT = "context-harness/prices"
_RATES = ("input_miss", "cache_hit", "cache_write", "output")
_PER = 1_000_000


@dataclass(frozen=True)
class Price:
    """One provider's rates, USD per million tokens, and where they come from."""

    provider: str
    model: str
    tier: str
    input_miss: float
    cache_hit: float
    cache_write: float
    output: float
    cache_model: str
    """The `harness.simulation._cache_models` model whose hits this price applies to."""
    source: str

    @property
    def writes(self) -> bool:
        """Whether a cache write is billed apart from a miss (Anthropic's surcharge)."""
        return self.cache_write != self.input_miss


@dataclass(frozen=True)
class PriceTable:
    """The prices of every provider, with the date they were read."""

    taken: str
    currency: str
    providers: dict[str, Price]

    def as_dict(self) -> dict[str, Any]:
        """Return the table as plain data (for ``results.json``)."""
        return {
            "taken": self.taken,
            "currency": self.currency,
            "providers": {
                n: {k: getattr(p, k) for k in ("model", "tier", *_RATES, "cache_model", "source")}
                for n, p in self.providers.items()
            },
        }


def _price(path: Path, name: str, raw: object) -> Price:
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: provider {name!r} must be an object; fix the price table")
    for key in _RATES:
        value = raw.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(
                f"{path}: provider {name!r} field {key!r} must be a non-negative number, not "
                f"{value!r}; fix the price table"
            )
    for key in ("model", "tier", "cache_model", "source"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise ConfigError(f"{path}: provider {name!r} needs a text field {key!r}")
    return Price(
        provider=name,
        model=raw["model"],
        tier=raw["tier"],
        input_miss=float(raw["input_miss"]),
        cache_hit=float(raw["cache_hit"]),
        cache_write=float(raw["cache_write"]),
        output=float(raw["output"]),
        cache_model=raw["cache_model"],
        source=raw["source"],
    )


def load_prices(path: Path = PRICES_PATH) -> PriceTable:
    """Read a price table.

    Raises:
        ConfigError: the file is unreadable, not a price table, or a rate is missing or
            negative; the message names the file and the field.
    """
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the price table: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != PRICES_FORMAT:
        raise ConfigError(f"{path}: not a {PRICES_FORMAT} file (its 'format' field)")
    providers = doc.get("providers")
    if not isinstance(providers, dict) or not providers:
        raise ConfigError(f"{path}: 'providers' must be a non-empty object")
    return PriceTable(
        taken=str(doc.get("taken") or ""),
        currency=str(doc.get("currency") or "USD"),
        providers={name: _price(path, name, raw) for name, raw in providers.items()},
    )


@cache
def default_prices() -> PriceTable:
    """Return the committed price table, read once."""
    return load_prices()


@dataclass(frozen=True)
class Cost:
    """A session's tokens by billing class, and what they cost."""

    miss: int
    hit: int
    write: int
    output: int
    usd: float

    def as_dict(self) -> dict[str, Any]:
        """Return the cost as plain data."""
        return {
            "miss": self.miss,
            "hit": self.hit,
            "write": self.write,
            "output": self.output,
            "usd": round(self.usd, 6),
        }


def session_cost(
    price: Price,
    prompt_tokens: Sequence[int],
    hit_tokens: Sequence[int],
    output_tokens: int,
    *,
    write_min: int = 1024,
) -> Cost:
    """Price a session's requests under one provider.

    Args:
        price: the provider's rates.
        prompt_tokens: input tokens of each request.
        hit_tokens: tokens of each request the provider's cache served.
        output_tokens: tokens the model generated over the session.
        write_min: the shortest prefix a cache write stores (Anthropic's minimum); a shorter
            request's uncached tokens are misses.

    Raises:
        ValueError: the two series differ in length, or a hit exceeds its request.
    """
    if len(prompt_tokens) != len(hit_tokens):
        raise ValueError(f"{len(prompt_tokens)} requests but {len(hit_tokens)} hit counts")
    miss = hit = write = 0
    for prompt, served in zip(prompt_tokens, hit_tokens, strict=True):
        if not 0 <= served <= prompt:
            raise ValueError(f"a hit of {served} tokens on a request of {prompt}")
        hit += served
        if price.writes and prompt >= write_min:
            write += prompt - served
        else:
            miss += prompt - served
    usd = (
        miss * price.input_miss
        + hit * price.cache_hit
        + write * price.cache_write
        + output_tokens * price.output
    ) / _PER
    return Cost(miss=miss, hit=hit, write=write, output=output_tokens, usd=usd)


def output_tokens(payloads: Sequence[EventData], tokenizer: Tokenizer) -> int:
    """Return the tokens the model generated in a session: its assistant messages, serialized."""
    return sum(
        len(tokenizer.encode(dumps(openai_message(p)) + "\n"))
        for p in payloads
        if isinstance(p, Message) and p.role == "assistant"
    )
