"""The block devices of this machine as a run would find them (``iogate devices``): what each
is (size, model, firmware: the environment facts the plugins read, :mod:`iogate.environment`)
and whether a run may write it: never without ``--allow-destructive``, and with it only when
:func:`iogate.targets.write_refusal` finds nothing against it (mounted or in use, carrying
data, read-only). Reading any of them is always allowed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from iogate import environment
from iogate.targets import write_refusal
from iogate.text import table
from iogate.units import format_size_exact

SYS_BLOCK = Path("/sys/class/block")


@dataclass(frozen=True)
class Device:
    """One block device: its path, whether it is a partition, its size in bytes, model and
    firmware (None where not known), and why a run would refuse to write it even with
    ``--allow-destructive`` (None: a blank device it would write)."""

    path: str
    partition: bool
    size: int
    model: str | None
    firmware: str | None
    refusal: str | None

    @property
    def verdict(self) -> str:
        return (f"refused: {self.refusal}" if self.refusal
                else "blank: written only with --allow-destructive")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _present(sysfs: Path = SYS_BLOCK) -> Iterator[tuple[str, bool, int]]:
    """Each block device with a size (an unattached loop device has none), as its path in
    /dev, whether it is a partition, and its size in bytes."""
    try:
        names = sorted(os.listdir(sysfs))
    except OSError:
        return
    for name in names:
        sectors = _read(sysfs / name / "size")
        if not sectors or not sectors.isdigit() or int(sectors) == 0:
            continue
        path = f"/dev/{name}"
        if os.path.exists(path):
            yield path, (sysfs / name / "partition").exists(), int(sectors) * 512


def devices(sysfs: Path = SYS_BLOCK) -> list[Device]:
    """The block devices present, whole disks and partitions, by name."""
    out = []
    for path, partition, size in _present(sysfs):
        facts = environment.capture(path)
        model = facts.get("target.device_model")
        firmware = facts.get("target.firmware")
        out.append(Device(path, partition, size, None if model is None else str(model),
                          None if firmware is None else str(firmware), write_refusal(path)))
    return out


def render(found: list[Device], columns: int) -> str:
    """The devices as ``iogate devices`` prints them: a row each, what a run may do with it
    last (under the row when long)."""
    if not found:
        return "no block device with a size found in /sys/class/block"
    rows = [(d.path + (" (partition)" if d.partition else ""), format_size_exact(d.size),
             d.model or "-", d.firmware or "-", d.verdict) for d in found]
    return table(("device", "size", "model", "firmware", "writes"), rows, columns=columns,
                 notes=True, free=(2,))
