"""Where random requests land: random_distribution (random, zipf, pareto, normal, zoned and
sequence, in fio's grammar) parsed into a :class:`Distribution`, and the random seed, each
with its parser and its JSON schema.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, PlainSerializer, WithJsonSchema

from iogate.engine.limits import SEQUENCE_MAX, ZONES_MAX
from iogate.expr import shown
from iogate.spec.fields import STRICT, Integer, describe_input, exact_pct, format_pct, pct_number
from iogate.units import check_ascii

# -- where random requests land -----------------------------------------------------------

class ZoneShare(BaseModel):
    """One zone of a zoned distribution: access percent and size percent."""

    model_config = STRICT
    access: float
    size: float


class Distribution(BaseModel):
    """random_distribution, parsed: the kind, its parameter, zones for ``zoned`` and block
    indices for ``sequence``."""

    model_config = STRICT
    kind: Literal["random", "zipf", "pareto", "normal", "zoned", "sequence"]
    param: float | None = None
    zones: list[ZoneShare] = Field(default_factory=list)
    blocks: list[int] = Field(default_factory=list)  # sequence: block indices in order

    def __str__(self) -> str:
        if self.kind == "sequence":
            return "sequence:" + ",".join(str(b) for b in self.blocks)
        if self.kind == "zoned":
            return "zoned:" + ":".join(f"{z.access:g}/{z.size:g}" for z in self.zones)
        return self.kind if self.param is None else f"{self.kind}:{self.param:g}"


_DIST_RANGES = {"zipf": "THETA > 0 and not 1", "pareto": "0 < H < 1", "normal": "SIGMA > 0"}


def _distribution(value: Any) -> Any:
    if isinstance(value, (BaseModel, Mapping)):
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a distribution like 'zipf:1.2', got {describe_input(value)}")
    kind, colon, rest = value.strip().partition(":")
    kind = {"gauss": "normal"}.get(kind, kind)
    if kind == "random":
        if colon:
            raise ValueError("'random' takes no parameter")
        return {"kind": "random"}
    if kind == "zoned":
        return {"kind": "zoned", "zones": _zones(value, rest)}
    if kind == "sequence":
        return {"kind": "sequence", "blocks": _sequence(value, rest)}
    if kind not in _DIST_RANGES:
        raise ValueError(f"unknown random_distribution '{shown(value)}': use random, zipf:THETA, "
                         "pareto:H, normal:SIGMA, zoned:ACCESS/SIZE:... or sequence:B,B,...")
    if not rest.strip():
        raise ValueError(f"{kind} needs a parameter ({_DIST_RANGES[kind]}), e.g. "
                         f"'{kind}:{ {'zipf': '1.2', 'pareto': '0.2', 'normal': '10'}[kind]}'")
    check_ascii(rest)  # float() would read other scripts' digits: '１.２'
    try:
        param = float(rest)
    except ValueError:
        raise ValueError(f"'{shown(value)}': the parameter '{shown(rest)}' is not a "
                         "number") from None
    ok = {"zipf": param > 0 and param != 1, "pareto": 0 < param < 1,
          "normal": param > 0}[kind]
    if not ok or not math.isfinite(param):
        raise ValueError(f"'{shown(value)}': {kind} needs {_DIST_RANGES[kind]}, got "
                         f"{shown(rest.strip())}")
    return {"kind": kind, "param": param}


def _sequence(value: str, rest: str) -> list[int]:
    """fio's sequence:2,0,1: block indices (in units of blockalign, by default the block
    size), visited in that order."""
    if not rest.strip():
        raise ValueError("sequence needs block indices, e.g. 'sequence:2,0,1'")
    blocks = []
    for raw in rest.split(","):
        text = raw.strip()
        if not (text.isascii() and text.isdigit()):
            raise ValueError(f"'{shown(value)}': the block index '{shown(text)}' is not a whole "
                             "number of 0 or more")
        if int(text) >= 1 << 63:
            raise ValueError(f"'{shown(value)}': the block index {shown(text)} is too large")
        blocks.append(int(text))
    if len(blocks) > SEQUENCE_MAX:
        raise ValueError(f"at most {SEQUENCE_MAX} block indices, got {len(blocks)}")
    return blocks


def _zones(value: str, rest: str) -> list[dict[str, Any]]:
    if not rest.strip():
        raise ValueError("zoned needs zones, e.g. 'zoned:60/10:30/20:10/70' (access%/size%)")
    zones: list[dict[str, Any]] = []
    open_zone: int | None = None  # a zone without a size (fio's '20/') takes the rest
    for raw in rest.split(":"):
        access, slash, size = raw.partition("/")
        if not slash:
            raise ValueError(f"zone '{shown(raw.strip())}': write ACCESS/SIZE in percent, "
                             "e.g. 60/10")
        where = f"zone '{shown(raw.strip())}'"
        if not size.strip():
            if open_zone is not None:
                raise ValueError(f"'{shown(value)}': only one zone may leave its size out "
                                 "(it takes the rest of the region)")
            open_zone = len(zones)
            zones.append({"access": pct_number(access, where), "size": 0})
            continue
        zones.append({"access": pct_number(access, where), "size": pct_number(size, where)})
    if len(zones) > ZONES_MAX:
        raise ValueError(f"at most {ZONES_MAX} zones, got {len(zones)}")
    if open_zone is not None:
        given = sum((exact_pct(z["size"]) for z in zones), Fraction(0))
        if given > 100:
            raise ValueError(f"'{shown(value)}': the sizes given add up to "
                             f"{format_pct(given)}, leaving nothing for the zone without one")
        left = 100 - given
        zones[open_zone]["size"] = int(left) if left.denominator == 1 else float(left)
    for column in ("access", "size"):
        total = sum((exact_pct(z[column]) for z in zones), Fraction(0))
        if total != 100:
            raise ValueError(f"'{shown(value)}': the {column} percentages add up to "
                             f"{format_pct(total)}, not 100")
    for z in zones:
        if z["size"] == 0 and z["access"] > 0:
            raise ValueError(f"'{shown(value)}': a zone of size 0 cannot take "
                             f"{z['access']}% of the requests")
    return zones


RandomDistribution = Annotated[Distribution, BeforeValidator(_distribution),
                               PlainSerializer(str, return_type=str),
                               WithJsonSchema({"type": "string", "pattern":
                                               r"^(random|zipf:.+|pareto:.+|normal:.+|"
                                               r"gauss:.+|zoned:.+|sequence:.+)$"})]
Seed = Annotated[Integer, Field(ge=0, lt=1 << 64)]
