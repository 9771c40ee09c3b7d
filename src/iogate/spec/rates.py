"""Rate limits: rate and rate_iops (fio's rate and rate_iops), the job's total or per
direction, each with its parser and its JSON schema, and how a total splits by the mix
(:func:`split_by_mix`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, WithJsonSchema

from iogate import expr
from iogate.expr import shown
from iogate.spec.fields import (
    ARITHMETIC,
    COUNT_SCHEMA,
    NUMBER,
    SIZE_UNIT,
    STRICT,
    describe_input,
    per_direction_schema,
)
from iogate.spec.modes import DIRECTIONS
from iogate.units import parse_bandwidth, parse_size

# -- rates --------------------------------------------------------------------------------

def _rate_literal(text: str) -> Fraction:
    # fio users write plain sizes ('100m') meaning per second; '100MiB/s' says so.
    if text.strip().endswith("/s"):
        value = parse_bandwidth(text)
        return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    return Fraction(parse_size(text))


RATE_KIND = expr.Kind("a bandwidth", _rate_literal, Fraction(1))


def _rate_value(kind: expr.Kind, what: str) -> Callable[[Any], int]:
    def validate(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(f"expected {what}, got {describe_input(value)}")
        n = value if isinstance(value, int) else expr.evaluate_int(value, kind=kind)
        if n < 0:
            raise ValueError(f"{value}: a rate cannot be negative")
        if n == 0:
            raise ValueError("a rate must be greater than 0; leave it out for no limit")
        return n
    return validate


class Rates(BaseModel):
    """A rate limit: the job's total, split by the mix, or set per direction."""

    model_config = STRICT
    total: int | None = None
    read: int | None = None
    write: int | None = None


def _rates(parse: Callable[[Any], int]) -> Callable[[Any], Any]:
    def validate(value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value
        if isinstance(value, Mapping):
            if "total" in value:
                raise ValueError("write the total as a single value, not as 'total:'")
            return {k: parse(v) if k in DIRECTIONS else v for k, v in value.items()}
        if isinstance(value, str) and "," in value:
            parts = value.split(",")
            if len(parts) > 2:
                raise ValueError(f"'{shown(value)}': give at most two rates, 'read,write'")
            return {d: parse(p.strip()) for d, p in zip(DIRECTIONS, parts, strict=True)
                    if p.strip()}
        return {"total": parse(value)}
    return validate


def _rate_schema(one: dict[str, Any], what: str) -> dict[str, Any]:
    return per_direction_schema(one, f"{what}: the job's total (split by rwmixread), fio's "
                                "'read,write', or a mapping {read, write}")


RateIops = Annotated[Rates, BeforeValidator(_rates(_rate_value(expr.COUNT, "IOPS like '20k'"))),
                     WithJsonSchema(_rate_schema(COUNT_SCHEMA, "IOPS limit"))]
RateBytes = Annotated[Rates, BeforeValidator(_rates(_rate_value(
    RATE_KIND, "a bandwidth like '100MiB/s'"))),
    WithJsonSchema(_rate_schema({"anyOf": [
        {"type": "integer", "minimum": 1},
        {"type": "string", "pattern": NUMBER + SIZE_UNIT + r"\s*(/s)?\s*$"}, ARITHMETIC]},
        "bandwidth limit in bytes per second ('100MiB/s', fio's '100m')"))]


def split_by_mix(total: int, rwmixread: int) -> tuple[int, int]:
    """A total rate split into (read, write) by the mix, rounded so that the two sum to it."""
    read = (total * rwmixread + 50) // 100
    return read, total - read
