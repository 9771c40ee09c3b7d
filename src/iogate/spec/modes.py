"""The rw modes of the suite language and the data directions they move data in.

Which modes read, which write, which do both (mixed) and which pick random offsets is
said here once; the field types, the rules between fields and the models ask this module.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator

Direction = Literal["read", "write"]
DIRECTIONS: tuple[Direction, Direction] = ("read", "write")

# fio's other names for a mode; a validated workload holds the mode's own name.
ALIASES = {"readwrite": "rw"}
RwMode = Annotated[Literal["read", "write", "randread", "randwrite", "rw", "readwrite",
                           "randrw"],
                   AfterValidator(lambda v: ALIASES.get(v, v))]
MIXED = ("rw", "randrw")
RANDOM = ("randread", "randwrite", "randrw")


def directions_of(rw: str) -> tuple[Direction, ...]:
    """The data directions a rw mode issues requests in."""
    if rw in ("read", "randread"):
        return ("read",)
    if rw in ("write", "randwrite"):
        return ("write",)
    return DIRECTIONS


def is_mixed(rw: Any) -> bool:
    """Whether ``rw``, as written (an alias, or not a mode at all), reads and writes."""
    return isinstance(rw, str) and ALIASES.get(rw, rw) in MIXED
