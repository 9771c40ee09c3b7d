"""The rw modes of the suite language and the directions they issue requests in.

Which modes read, which write, which trim, which do both reads and writes (mixed) and which
pick random offsets is said here once; the field types, the rules between fields and the
models ask this module.

Trims (``trim``, ``randtrim``, ``trimwrite``, ``randtrimwrite``) discard blocks: a discard
on a block device, a punched hole in a regular file. They are a direction of their own in
the results (``trim.iops``, ``trim.clat.p99``...), but the per-direction fields (``bs``,
``bsrange``, ``bssplit``, ``blockalign``, ``rate``, ``rate_iops``) have a read and a write
value only: a trim mode takes the write value for its trims, and ``trimwrite`` writes each
trimmed block again with the same offset and size.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator

Direction = Literal["read", "write", "trim"]
FieldDirection = Literal["read", "write"]
# The directions of the per-direction fields (bs: read,write; rate: read,write ...).
DIRECTIONS: tuple[FieldDirection, FieldDirection] = ("read", "write")

# fio's other names for a mode; a validated workload holds the mode's own name.
ALIASES = {"readwrite": "rw"}
RwMode = Annotated[Literal["read", "write", "randread", "randwrite", "rw", "readwrite",
                           "randrw", "trim", "randtrim", "trimwrite", "randtrimwrite"],
                   AfterValidator(lambda v: ALIASES.get(v, v))]
MIXED = ("rw", "randrw")
RANDOM = ("randread", "randwrite", "randrw", "randtrim", "randtrimwrite")
TRIM_MODES = ("trim", "randtrim", "trimwrite", "randtrimwrite")


def directions_of(rw: str) -> tuple[Direction, ...]:
    """The directions a rw mode issues requests in."""
    if rw in ("read", "randread"):
        return ("read",)
    if rw in ("write", "randwrite"):
        return ("write",)
    if rw in ("trim", "randtrim"):
        return ("trim",)
    if rw in ("trimwrite", "randtrimwrite"):
        return ("trim", "write")
    return ("read", "write")


def field_direction(direction: Direction) -> FieldDirection:
    """The value of the per-direction fields a direction takes: trims take the write one."""
    return "write" if direction == "trim" else direction


def field_directions_of(rw: str) -> tuple[FieldDirection, ...]:
    """The values of the per-direction fields a rw mode uses."""
    return tuple(dict.fromkeys(field_direction(d) for d in directions_of(rw)))


def is_mixed(rw: Any) -> bool:
    """Whether ``rw``, as written (an alias, or not a mode at all), reads and writes."""
    return isinstance(rw, str) and ALIASES.get(rw, rw) in MIXED
