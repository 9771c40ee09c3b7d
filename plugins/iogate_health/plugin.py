"""The target device's health read before and after each case: the ``health.*`` metrics.

Before a case (when iogate captures the target's environment, before any precondition) and
after each run of it, the whole disk behind the target (resolved as :mod:`iogate_sysinfo`
does: a file to the device of its filesystem, a partition to its disk) is read with
``smartctl -x --json=c`` (SATA, SAS and NVMe), or for an NVMe device without smartmontools
with nvme-cli's ``nvme smart-log -o json``. Each tool runs as a subprocess, never through a
shell, with a timeout. A reading serves every case it can: the cases of a group share the
reading before them and the one after their run, so a group of 40 workloads on one disk reads
it twice, not 80 times.

Metrics (declared through ``iogate_metric_families``, so ``iogate metrics`` lists them and
expectations may name them): ``health.NAME`` is the value after the run,
``health.NAME.before`` the value before the case and, for the values that only count up,
``health.NAME.delta`` the difference (``health.media_errors.delta: "== 0"``). The names
and how each device type maps to them are in :mod:`iogate_health.parse`.

A device without health data (a virtio disk, a loop device, a file on tmpfs), a missing tool
or a tool that fails makes every health metric not measured, with the reason: an expectation
on one fails rather than passes, and the case itself is never an error for it. The tools'
raw JSON of each case is added to the results document under ``health`` (keyed by case id).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iogate.hooks import NotMeasured, hookimpl
from iogate.ids import case_id
from iogate.metrics import Family, Form, Kind
from iogate.outcome import CaseResult
from iogate.results import RunResult
from iogate_health.parse import from_nvme_cli, from_smartctl, smartctl_messages
from iogate_sysinfo.plugin import target_facts

if TYPE_CHECKING:  # loaded with the plugins by every command, most of which read no suite
    from iogate.spec import Case

PLUGIN = "iogate_health"
SCOPE = "health"
TIMEOUT_S = 30.0

# name, kind, counts up (so has a .delta), what it is
FIELDS: tuple[tuple[str, Kind, bool, str], ...] = (
    ("critical_warning", Kind.COUNT, False,
     "NVMe critical warning bits; ATA/SCSI: 1 when the SMART overall status failed"),
    ("temperature", Kind.NUMBER, False, "device temperature in degrees Celsius"),
    ("media_errors", Kind.COUNT, True,
     "NVMe media and data integrity errors; ATA: reallocated + pending + offline "
     "uncorrectable sectors; SCSI: grown defects + uncorrected errors"),
    ("error_log_entries", Kind.COUNT, True,
     "NVMe error log entries; ATA: SMART error log count"),
    ("percentage_used", Kind.PERCENT, True, "endurance used, in percent"),
    ("unsafe_shutdowns", Kind.COUNT, True,
     "NVMe unsafe shutdowns; ATA: unexpected power loss (174) or power-off retracts (192)"),
    ("power_on_hours", Kind.COUNT, True, "power-on time in hours"),
    ("data_units_read", Kind.COUNT, True, "data read, in NVMe units of 512,000 bytes"),
    ("data_units_written", Kind.COUNT, True, "data written, in NVMe units of 512,000 bytes"),
    ("bytes_read", Kind.BYTES, True, "data read, in bytes"),
    ("bytes_written", Kind.BYTES, True, "data written, in bytes"),
)

# Block devices that have no health data of their own, by name prefix: why, for the reason.
_VIRTUAL = (("loop", "loop device"), ("vd", "virtio disk"), ("dm-", "device-mapper device"),
            ("md", "md RAID device"), ("zram", "compressed RAM disk"), ("ram", "RAM disk"),
            ("nbd", "network block device"), ("xvd", "Xen virtual disk"))


def metric_paths() -> list[str]:
    """Every ``health.*`` path, in the order of :data:`FIELDS`."""
    return [f"{SCOPE}.{n}" for f in _families() for n in f.names]


def _families() -> list[Family]:
    out = []
    for name, kind, counts_up, about in FIELDS:
        names = [name, f"{name}.before"] + ([f"{name}.delta"] if counts_up else [])
        suffix = "; .before: before the case" + ("; .delta: after - before" if counts_up
                                                  else "")
        out.append(Family((SCOPE,), tuple(names), kind, Form.PLAIN,
                          f"target device health: {about} (after the run{suffix})",
                          "plugin", None, plugin=PLUGIN))
    return out


# -- reading a device --------------------------------------------------------------------------

@dataclass
class Reading:
    """One reading of a target's health: the values, or why there are none."""

    device: str | None  # the whole disk's node, /dev/nvme0n1; None: no block device
    tool: str | None = None
    values: dict[str, float] = field(default_factory=dict)
    raw: Any = None  # the tool's JSON, as it printed it
    reason: str | None = None  # why values is empty

    def to_json(self) -> dict[str, Any]:
        return {"device": self.device, "tool": self.tool, "values": self.values,
                "reason": self.reason, "raw": self.raw}


def resolve_device(target: str) -> tuple[str | None, str]:
    """The node of the whole disk behind ``target`` (``/dev/vda`` for a file on vda1), or
    None and why there is none. Never raises."""
    facts = target_facts(target)  # best effort: a vanished mount gives the path alone
    name = facts.get("target.device")
    if isinstance(name, str):
        return f"/dev/{name}", ""
    fs = facts.get("target.fs")
    return None, f"no block device behind {facts['target.path']}" + (f" ({fs})" if fs else "")


def _virtual(device: str) -> str | None:
    name = os.path.basename(device)
    return next((why for prefix, why in _VIRTUAL if name.startswith(prefix)), None)


def _run(argv: list[str], timeout: float) -> tuple[Any, str | None]:
    """The tool's JSON output, or None and why not. Never raises."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"no answer within {timeout:g} s"
    except OSError as exc:
        return None, f"cannot run: {exc.strerror or exc}"
    try:
        return json.loads(done.stdout), None
    except ValueError:
        said = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
        return None, f"exit status {done.returncode}" + (f": {said[0]}" if said else "")


def _smartctl(tool: str, device: str, timeout: float) -> Reading:
    doc, error = _run([tool, "-x", "--json=c", device], timeout)
    if doc is None or not isinstance(doc, dict):
        return Reading(device, "smartctl", raw=doc,
                       reason=f"smartctl: {device}: {error or 'output is not a JSON object'}")
    values = from_smartctl(doc)
    if values:
        return Reading(device, "smartctl", values, doc)
    said = [m.removeprefix(f"{device}: ") for m in smartctl_messages(doc)]
    detail = "; ".join(x for x in (_virtual(device), *said) if x)
    return Reading(device, "smartctl", raw=doc,
                   reason=f"smartctl: {device}: no SMART/health data"
                          + (f" ({detail})" if detail else ""))


def _nvme_cli(tool: str, device: str, timeout: float) -> Reading:
    doc, error = _run([tool, "smart-log", device, "-o", "json"], timeout)
    values = from_nvme_cli(doc) if isinstance(doc, dict) else {}
    if values:
        return Reading(device, "nvme", values, doc)
    return Reading(device, "nvme", raw=doc,
                   reason=f"nvme smart-log: {device}: {error or 'no health data'}")


def read_health(target: str, *, search_path: str | None = None,
                timeout: float = TIMEOUT_S) -> Reading:
    """The health of the disk behind ``target``. ``search_path`` is where the tools are
    looked for (default: ``PATH``). Never raises: a reading without values says why."""
    device, why = resolve_device(target)
    if device is None:
        return Reading(None, reason=why)
    smartctl = shutil.which("smartctl", path=search_path)
    nvme = shutil.which("nvme", path=search_path) \
        if os.path.basename(device).startswith("nvme") else None
    if smartctl is None and nvme is None:
        return Reading(device, reason="smartctl not installed")
    reading = _smartctl(smartctl, device, timeout) if smartctl else None
    if (reading is None or not reading.values) and nvme is not None:
        other = _nvme_cli(nvme, device, timeout)
        if other.values or reading is None:
            return other
    assert reading is not None
    return reading


# -- readings as metrics ------------------------------------------------------------------------

def health_metrics(before: Reading | None, after: Reading) -> dict[str, float | NotMeasured]:
    """Every ``health.*`` path: a value, or :class:`NotMeasured` with the reason."""
    out: dict[str, float | NotMeasured] = {}

    def missing(reading: Reading | None, name: str, when: str) -> NotMeasured:
        if reading is None:
            return NotMeasured(f"the target's health was not read {when} the case")
        if reading.reason:
            return NotMeasured(reading.reason)
        return NotMeasured(f"{reading.tool}: {reading.device} does not report {name}")

    for name, _, counts_up, _ in FIELDS:
        now = after.values.get(name)
        then = before.values.get(name) if before is not None else None
        out[f"{SCOPE}.{name}"] = now if now is not None else missing(after, name, "after")
        out[f"{SCOPE}.{name}.before"] = then if then is not None else \
            missing(before, name, "before")
        if counts_up:
            out[f"{SCOPE}.{name}.delta"] = now - then if now is not None and then is not None \
                else out[f"{SCOPE}.{name}" if now is None else f"{SCOPE}.{name}.before"]
    return out


# -- the hooks ---------------------------------------------------------------------------------

# The reading before each case, by the device (or, without one, the path) it is of; and what
# each case's runs read, by case id, for the results document.
_before: dict[str, Reading] = {}
_records: dict[str, dict[str, Any]] = {}
# One reading serves every case it can: the devices read before the cases now starting (the
# cases of a group are all captured before any of them runs; the set empties when a run is
# measured or a case ends), and the latest reading of each device with when it was taken
# (time.monotonic()), which is "after" for every run that ended before it.
_read_before: set[str] = set()
_latest: dict[str, tuple[float, Reading]] = {}
# Each host's own result of a run on a fleet (judged for per_host expectations after the
# fleet's aggregate): its device is on that host, not here.
_remote: weakref.WeakValueDictionary[int, RunResult] = weakref.WeakValueDictionary()


def _key(target: str) -> str:
    device, _ = resolve_device(target)
    return device or os.path.abspath(target)


@hookimpl
def iogate_metric_families() -> list[Family]:
    return _families()


@hookimpl
def iogate_environment(target: str | None) -> dict[str, object]:
    # Called for each case's target before anything of the case runs: the "before" reading.
    if target:
        # health is best effort: a case never fails for want of it
        with contextlib.suppress(Exception):
            key = _key(target)
            if key not in _read_before:
                _before[key] = read_health(target)
                _read_before.add(key)
    return {}


@hookimpl
def iogate_case_end(case: Case, result: CaseResult) -> None:
    _read_before.clear()  # what starts next starts after this case's I/O


def _after(target: str, run: RunResult) -> Reading:
    """A reading of the device taken since ``run`` ended: the latest, when it was, else a new
    one."""
    key = _key(target)
    taken = _latest.get(key)
    if taken is not None and run.ended and taken[0] >= run.ended:
        return taken[1]
    now = time.monotonic()
    try:
        reading = read_health(target)
    except Exception as exc:  # never an error of the case
        reading = Reading(None, reason=f"reading the device's health failed: {exc}")
    _latest[key] = (now, reading)
    return reading


def _target(run: RunResult) -> str | None:
    files = [f for spec in run.specs for f in spec.files()]
    return files[0] if files else None


@hookimpl
def iogate_metrics(case: Case, run: RunResult) -> dict[str, float | NotMeasured]:
    target = _target(run)
    if run.hosts or _remote.get(id(run)) is run:
        for host_run in run.hosts.values():
            _remote[id(host_run)] = host_run
        after = Reading(None, reason="the case ran on remote hosts; their devices are not read")
        return health_metrics(None, after)
    if target is None:
        return health_metrics(None, Reading(None, reason="the case has no target file"))
    _read_before.clear()
    after = _after(target, run)
    before = _before.get(_key(target))
    _records[case_id(case)] = {"target": target,
                               "before": before.to_json() if before else None,
                               "after": after.to_json()}
    return health_metrics(before, after)


@hookimpl
def iogate_report(results: Sequence[CaseResult], document: dict[str, Any]) -> None:
    health = {r.id: _records[r.id] for r in results if r.id in _records}
    if health:
        document["health"] = health
