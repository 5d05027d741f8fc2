"""What a run cost: the model's tokens and, from a price table the user gives, dollars.

The kit knows no provider's prices (they change, and a self-hosted model has none), so a
run is priced only from a table given with `cua eval --prices FILE`: a JSON or YAML object
from model name to US dollars per million tokens,

    {"gpt-4o": {"prompt": 2.5, "completion": 10.0},
     "*": {"prompt": 0.2, "completion": 0.6, "image": 0.2}}

`image` (optional) prices the prompt's image tokens apart from its text tokens, where the
backend reports how many there were; without it they are prompt tokens like any. `*`
prices every model the table does not name. A model the table does not price is refused
before any sandbox starts: a run silently priced at zero would read as free.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cua.policy.base import TokenCounts

__all__ = ["ModelPrice", "PriceError", "cost_usd", "load_price"]


class PriceError(ValueError):
    """A price table that cannot price this run (unreadable, malformed, or silent on its model)."""


class ModelPrice(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid")
    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)
    image: float | None = Field(default=None, ge=0)


def load_price(path: Path, model: str) -> ModelPrice:
    """The price of `model` in the table at `path` (its own entry, else `*`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PriceError(f"cannot read the price table {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise PriceError(f"the price table {path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: "
                         f"{exc}") from None
    if not isinstance(data, dict):
        raise PriceError(f"the price table {path} must map model names to prices, e.g. "
                         '{"gpt-4o": {"prompt": 2.5, "completion": 10.0}}')
    entry = data.get(model, data.get("*"))
    if entry is None:
        named = ", ".join(sorted(str(k) for k in data)) or "none"
        raise PriceError(f"the price table {path} has no price for the model {model!r} (it prices: {named}; "
                         "add the model or a '*' entry)")
    try:
        return ModelPrice.model_validate(entry)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise PriceError(f"the price table {path}, model {model!r}: {where}: {first['msg']} "
                         "(dollars per million tokens: prompt, completion, optional image)") from None


def cost_usd(tokens: TokenCounts | None, price: ModelPrice | None) -> float | None:
    """Dollars for `tokens` at `price` (to the millionth); None without tokens or a price."""
    if tokens is None or price is None:
        return None
    image = tokens.image or 0
    text_prompt = tokens.prompt - image if price.image is not None else tokens.prompt
    total = text_prompt * price.prompt + tokens.completion * price.completion
    if price.image is not None:
        total += image * price.image
    return round(total / 1_000_000, 6)
