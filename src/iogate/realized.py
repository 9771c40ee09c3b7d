"""Realized versus requested: did the run do what its jobs asked for?

Two views over the same metric paths as iogate.metrics:

- requested(specs) gives what the jobs asked for, under ``requested.<metric path>``
  (``requested.mix.read_pct``, ``requested.read.bs_pct.4096``, ``requested.read.iops``), so
  a report can show asked next to got.
- realized_warnings(specs, result) compares the counts the engine measured with the
  request and complains only when the difference is larger than sampling noise explains:
  a share p over n independent draws is binomial, so a realized share more than Z_LIMIT
  standard deviations sqrt(n p (1 - p)) away is flagged; a rate is a count over the
  run time, judged against max(2%, Z_LIMIT Poisson sigmas). Each warning starts with the
  metric path a user can put an expectation on.

device_warnings(specs, result) holds the block devices' own counters (``disk.*``,
iogate.diskstats) against what the jobs on each device did: a device that read less than
CACHE_SHARE of the bytes its jobs read was answered by the page cache (merges and
readahead never make the device move fewer bytes than it was asked for), and one that
completed far more requests of a direction its jobs did than they could have caused saw
other I/O (see _disk for the allowance).

no_io(specs, result) says why a run that asked for I/O did none: an error of the run, never
a failure of the device.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from iogate.diskstats import SECTOR, DiskStats
from iogate.metrics import BS_PCT, DIRECTIONS
from iogate.results import (
    DirectionResult,
    JobResult,
    RunResult,
    achieved_rates,
    mean_bs,
    rate_target,
)
from iogate.units import format_bandwidth, format_size

if TYPE_CHECKING:
    from iogate.job import BsEntry, JobSpec

Z_LIMIT = 4.0  # binomial / Poisson standard deviations that count as "not noise"
RATE_SLACK = 0.02  # a rate within 2% of its target is never a complaint
COMPRESS_SLACK = 0.05  # allowed |realized - requested| compression ratio
DEDUPE_SLACK = 2.0  # percentage points on top of the binomial tolerance
PPM = 1_000_000
# Device statistics. The device must have moved at least this share of the bytes its jobs
# read (or, with direct I/O, wrote): readahead only adds, merges keep bytes, so less than
# half means at least half was served from memory. Not judged below DISK_MIN_BYTES.
CACHE_SHARE = 0.5
DISK_MIN_BYTES = 1 << 20
# Requests a device may complete per request of its jobs: merges make fewer, a request
# larger than the device's limit is split (each SPLIT_BYTES of a job's bytes counts as a
# request, the smallest common max_sectors_kb), readahead and the filesystem's metadata
# and journal add some; beyond POLLUTION_FACTOR times that, plus POLLUTION_SLACK, the
# device served other I/O.
SPLIT_BYTES = 128 << 10
POLLUTION_FACTOR = 2.0
POLLUTION_SLACK = 64
MIXED = ("rw", "randrw")


# -- what was asked -----------------------------------------------------------------------

def size_shares(table: Iterable[BsEntry]) -> dict[int, float]:
    """Probability of each request size under a block size table (a range entry spreads
    its weight evenly over the multiples of its minimum)."""
    shares: dict[int, float] = {}
    for e in table:
        sizes = e.sizes()
        for s in sizes:
            shares[s] = shares.get(s, 0.0) + e.weight / PPM / len(sizes)
    return shares


def _read_share(spec: JobSpec) -> float | None:
    """Share of a job's data requests that should be reads (0..1), None if unknown."""
    if not spec.does("read") and not spec.does("write"):
        return None  # trims only: no data requests to share
    if not spec.does("write"):
        return 1.0
    if not spec.does("read"):
        return 0.0
    if not spec.rate_limited:
        return spec.rwmixread / 100
    # Under a rate both directions follow their own schedules: the stricter limit of
    # each, in requests per second.
    per_dir = []
    for name in ("read", "write"):
        iops, bw = spec.rate(name)
        limits = [float(iops)] if iops else []
        bs = mean_bs(spec, name)
        if bw and bs > 0:
            limits.append(bw / bs)
        if not limits:
            return None
        per_dir.append(min(limits))
    total = sum(per_dir)
    return per_dir[0] / total if total > 0 else None


def prio_share(spec: JobSpec, name: str) -> float | None:
    """Share of a direction's requests that should carry the command priority (0..1),
    None when the job gives none: each size's share of requests times the share of that
    size's requests its command priority entries ask for."""
    entries = spec.cmdprio_read if name == "read" else \
        spec.cmdprio_write if name == "write" else []
    if not entries or not spec.does(name):
        return None
    return sum(p * min(1.0, sum(e.share for e in entries if e.bs in (0, size)) / PPM)
               for size, p in size_shares(spec.bs_table(name)).items())


def _agreed(values: list[float | None]) -> float | None:
    """The common value of every job, None when jobs differ or one does not know."""
    if not values or any(v is None for v in values):
        return None
    first = values[0]
    assert first is not None
    return first if all(v is not None and math.isclose(v, first) for v in values) else None


def requested(specs: list[JobSpec]) -> dict[str, float]:
    """What the jobs asked for, under ``requested.<metric path>``.

    Shares (mix, block sizes, data) are given when every job concerned asks for the
    same; rates are summed over jobs.
    """
    out: dict[str, float] = {}
    if not specs:
        return out
    mix = _agreed([100 * s if (s := _read_share(spec)) is not None else None
                   for spec in specs])
    if mix is not None:
        out["requested.mix.read_pct"] = mix
    for name in DIRECTIONS:
        users = [spec for spec in specs if spec.does(name)]
        if not users:
            continue
        tables = [size_shares(spec.bs_table(name)) for spec in users]
        if all(t == tables[0] for t in tables):
            for size, share in sorted(tables[0].items()):
                out[f"requested.{name}.{BS_PCT}.{size}"] = 100 * share
            out[f"requested.{name}.bs.mean"] = mean_bs(users[0], name)
        prio = _agreed([prio_share(spec, name) for spec in users])
        if prio is not None:
            out[f"requested.{name}.prio_pct"] = 100 * prio
        iops = sum(spec.rate(name)[0] for spec in users)
        bw = sum(spec.rate(name)[1] for spec in users)
        if iops:
            out[f"requested.{name}.iops"] = float(iops)
        if bw:
            out[f"requested.{name}.bw"] = float(bw)
    rates = [spec.rate(name) for spec in specs for name in DIRECTIONS if spec.does(name)]
    if any(i for i, _ in rates) and not any(b for _, b in rates):
        out["requested.total.iops"] = float(sum(i for i, _ in rates))
    if any(b for _, b in rates) and not any(i for i, _ in rates):
        out["requested.total.bw"] = float(sum(b for _, b in rates))
    writers = [spec for spec in specs if spec.does("write")]
    compress = _agreed([(100 - s.compress_pct) / 100 if s.compress_pct else None
                        for s in writers])
    if compress is not None:
        out["requested.data.compress_ratio"] = compress
    dedupe = _agreed([float(s.dedupe_pct) if s.dedupe_pct else None for s in writers])
    if dedupe is not None:
        out["requested.data.dedupe_pct"] = dedupe
    return out


# -- what was got -------------------------------------------------------------------------

def _z(count: int, n: int, p: float) -> float:
    """Standard score of `count` successes in `n` draws of probability p (0 < p < 1)."""
    return (count - n * p) / math.sqrt(n * p * (1 - p))


def _pct(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") + "%"


def _share_warning(path: str, count: int, n: int, p: float, what: str) -> str | None:
    """A warning when `count` of `n` is further from the share p than noise explains.

    p of exactly 0 or 1 allows no deviation at all: nothing random is involved.
    """
    got = 100 * count / n
    if p <= 0 or p >= 1:
        if count == round(n * p):
            return None
        return f"{path}: {_pct(got)} of {what}, {_pct(100 * p)} were requested (exactly)"
    z = _z(count, n, p)
    if abs(z) <= Z_LIMIT:
        return None
    return (f"{path}: {_pct(got)} of {what}, {_pct(100 * p)} were requested "
            f"(z = {z:+.1f} over {n} IOs)")


def _mix(spec: JobSpec, job: JobResult) -> Iterator[str]:
    if spec.rw not in MIXED or spec.rate_limited:
        return  # under a rate the mix follows the two schedules, not rwmixread
    n = job.read.ios + job.write.ios
    if n:
        w = _share_warning("mix.read_pct", job.read.ios, n, spec.rwmixread / 100,
                           f"{n} IOs were reads")
        if w:
            yield w


def _block_sizes(spec: JobSpec, name: str, d: DirectionResult) -> Iterator[str]:
    n = d.bs_ios
    if not spec.does(name) or n == 0 or d.bs_other_ios:
        return  # sizes beyond the counted table cannot be attributed
    table = spec.bs_table(name)
    shares = size_shares(table)
    for size, count in sorted(d.bs_counts.items()):
        if shares.get(size, 0.0) == 0.0:
            yield (f"{name}.{BS_PCT}.{size}: {count} {name}s were {size} bytes, "
                   "a size the request never asks for")
    seen: set[tuple[int, int]] = set()
    for e in table:
        if (e.lo, e.hi) in seen:
            continue
        seen.add((e.lo, e.hi))
        sizes = set(e.sizes())
        p = sum(shares.get(s, 0.0) for s in sizes)
        count = sum(c for s, c in d.bs_counts.items() if s in sizes)
        if e.lo == e.hi:
            path, what = f"{name}.{BS_PCT}.{e.lo}", f"{name}s were {e.lo} bytes"
        else:
            path, what = (f"{name}.{BS_PCT}.<{e.lo}..{e.hi}>",
                          f"{name}s were sizes in {e.lo}..{e.hi} bytes")
        w = _share_warning(path, count, n, min(1.0, p), what)
        if w:
            yield w


def _prio(spec: JobSpec, name: str, d: DirectionResult) -> Iterator[str]:
    p = prio_share(spec, name)
    if p is None or d.prio_ios is None or not d.ios:
        return
    w = _share_warning(f"{name}.prio_pct", d.prio_ios, d.ios, p,
                       f"{d.ios} {name}s carried the command priority")
    if w:
        yield w


def _rate(spec: JobSpec, name: str, d: DirectionResult) -> Iterator[str]:
    target = rate_target(spec, name)
    done_iops, done_bw, seconds = achieved_rates(d)
    if target is None or seconds <= 0:
        return
    iops, bw = target
    candidates = []  # (achieved / requested, requested IOPS, description)
    if iops:
        candidates.append((done_iops / iops, float(iops),
                           f"{done_iops:.0f} of {iops} {name} IOPS"))
    bs = mean_bs(spec, name)
    if bw and bs > 0:
        candidates.append((done_bw / bw, bw / bs, f"{format_bandwidth(done_bw)} of "
                           f"{format_bandwidth(bw)} {name} bandwidth"))
    if not candidates:
        return
    # The stricter limit binds, so the direction is judged by its nearer ratio.
    ratio, _asked_iops, text = max(candidates)
    expected = min(c[1] for c in candidates) * seconds  # requests the schedule asked for
    tolerance = max(RATE_SLACK, Z_LIMIT / math.sqrt(expected)) if expected > 0 else 1.0
    if ratio < 1 - tolerance:
        yield f"{name}.rate_pct: the device could not keep up: {text} ({ratio:.0%})"
    elif ratio > 1 + tolerance:
        yield f"{name}.rate_pct: ran faster than requested: {text} ({ratio:.0%})"


def _data(spec: JobSpec, job: JobResult) -> Iterator[str]:
    sample = job.data
    if spec.compress_pct and sample.sampled_bytes:
        got = sample.compressed_bytes / sample.sampled_bytes
        want = (100 - spec.compress_pct) / 100
        if abs(got - want) > COMPRESS_SLACK:
            yield (f"data.compress_ratio: sampled writes compressed to {got:.3f} of their "
                   f"size, {want:.2f} was requested (buffer_compress_percentage "
                   f"{spec.compress_pct}; {format_size(sample.sampled_bytes)} sampled)")
    if spec.dedupe_pct and sample.blocks:
        p = spec.dedupe_pct / 100
        got = 100 * sample.duplicate_blocks / sample.blocks
        sigma = 100 * math.sqrt(p * (1 - p) / sample.blocks)
        if abs(got - 100 * p) > Z_LIMIT * sigma + DEDUPE_SLACK:
            why = (" (verify makes every written block unique: its header and sector stamps "
                   "differ per write)" if spec.verify != "none" else "")
            yield (f"data.dedupe_pct: {_pct(got)} of {sample.blocks} sampled written blocks "
                   f"were duplicates, {spec.dedupe_pct}% was requested{why}")


def realized_warnings(specs: list[JobSpec], result: RunResult) -> list[str]:
    """Where the realized workload differs from the request by more than noise.

    Computed from what the engine counted, per job (``(job N)`` is named when there is
    more than one).
    """
    out: list[str] = []
    for index, (spec, job) in enumerate(zip(specs, result.jobs, strict=False)):
        found = [*_mix(spec, job)]
        for name in DIRECTIONS:
            found += _block_sizes(spec, name, job.direction(name))
            found += _rate(spec, name, job.direction(name))
            found += _prio(spec, name, job.direction(name))
        found += _data(spec, job)
        if len(specs) > 1:
            found = [w.replace(":", f" (job {index}):", 1) for w in found]
        out += found
    return out


def device_warnings(specs: list[JobSpec], result: RunResult) -> list[str]:
    """Where the block devices' own counters say the run did not measure the device: the
    page cache answered, or other I/O ran on it (see CACHE_SHARE, POLLUTION_FACTOR)."""
    return [w for disk in result.disks for w in _disk(specs, result, disk)]


def _disk(specs: list[JobSpec], result: RunResult, disk: DiskStats) -> Iterator[str]:
    """The device's counters against what its jobs did (both over the counted run)."""
    total = disk.total()
    jobs = [(specs[j], result.jobs[j]) for j in disk.jobs
            if j < len(specs) and j < len(result.jobs)]
    if total is None or not jobs:
        return
    for name in ("read", "write"):
        dev_bytes = total.count(f"{name}_sectors") * SECTOR
        dev_ios = total.count(f"{name}_ios")
        measured = [(spec, job.direction(name)) for spec, job in jobs
                    if name == "read" or spec.direct]  # buffered writes are written back later
        job_bytes = sum(d.bytes for _, d in measured)
        if job_bytes >= DISK_MIN_BYTES and dev_bytes < CACHE_SHARE * job_bytes:
            verb = "wrote" if name == "write" else "read"
            yield (f"disk.{name}.bytes: the device {disk.device} {verb} "
                   f"{format_size(dev_bytes)} of the {format_size(job_bytes)} the jobs {verb}: "
                   f"served mostly by the page cache, not the device (less than "
                   f"{CACHE_SHARE:.0%}); use direct I/O or drop the cache to measure the device")
        ios = sum(j.direction(name).ios for _, j in jobs)
        bytes_ = sum(j.direction(name).bytes for _, j in jobs)
        allowed = max(ios, math.ceil(bytes_ / SPLIT_BYTES))
        # like with like: a direction the jobs did not measure is not judged
        if ios and dev_ios > POLLUTION_FACTOR * allowed + POLLUTION_SLACK:
            yield (f"disk.{name}.ios: the device {disk.device} completed {dev_ios} {name}s "
                   f"while the jobs on it did {ios}: other I/O on the same device (other "
                   "processes, write-back of earlier writes) polluted the measurement (more "
                   f"than {POLLUTION_FACTOR:g} x the jobs' requests, each {SPLIT_BYTES >> 10} "
                   f"KiB counted as one, + {POLLUTION_SLACK})")


def no_io(specs: list[JobSpec], result: RunResult) -> str | None:
    """Why a run that asked for I/O did none, as one sentence, or None.

    A job that should issue (time based, or with a size, request or byte limit to do) and
    reported neither a request nor an error in any direction did none. Jobs that may rightly
    do none are left out: in a run that was interrupted or stopped, a job that some job's
    exitall may have ended before it started, a fill job (the filesystem may be full already)
    and one whose rate or thinktime leaves less than one request due in its runtime. The
    sentence names the first such job, what it asked for and what the engine counted for
    it; the others are counted. A run on a fleet is judged per host.
    """
    from iogate.results import requests_due
    from iogate.units import format_duration

    if result.interrupted or result.stopped:
        return None
    for host, part in sorted(result.hosts.items()):
        reason = no_io(specs, part)
        if reason is not None:
            return f"{host}: {reason}"
    kinds = {"read": "reads", "randread": "random reads", "write": "writes",
             "randwrite": "random writes", "rw": "reads and writes",
             "randrw": "random reads and writes", "trim": "trims", "randtrim": "random trims",
             "trimwrite": "trims and writes", "randtrimwrite": "random trims and writes"}
    idle: list[tuple[int, JobSpec, JobResult]] = []
    for index, (spec, job) in enumerate(zip(specs, result.jobs, strict=False)):
        names = [n for n in DIRECTIONS if spec.does(n)]
        if any(job.direction(n).ios for n in names) or any(
                job.direction(n).errors for n in (*DIRECTIONS, "sync")):
            continue
        if not spec.time_based and not (spec.size or spec.io_limit_bytes or spec.io_limit_ios):
            continue  # asked for nothing
        if spec.fill or any(other.exit_mask >> min(index, 63) & 1
                            for k, other in enumerate(specs) if k != index):
            continue
        if spec.runtime_ns and sum(requests_due(spec, n, spec.runtime_ns / 1e9)
                                   for n in names) < 1:
            continue  # nothing may be due within its runtime
        idle.append((index, spec, job))
    if not idle:
        return None
    index, spec, job = idle[0]
    kind = kinds.get(spec.rw, spec.rw)
    if spec.time_based:
        asked = f"{format_duration(spec.runtime_ns)} of time-based {kind}"
    elif spec.io_limit_ios:
        asked = f"{spec.io_limit_ios} {kind}"
    else:
        asked = f"{format_size(spec.io_limit_bytes or spec.size)} of {kind}"
    if spec.runtime_ns and not spec.time_based:
        asked += f" within {format_duration(spec.runtime_ns)}"
    threads = "its thread" if spec.numjobs == 1 else f"its {spec.numjobs} threads"
    counted = max(job.direction(n).runtime_ns for n in (*DIRECTIONS, "sync"))
    done = "issued none"
    if spec.ramp_ns and not spec.time_based and not counted:
        done = "measured none"
        why = (f"it was all done within its ramp_time ({format_duration(spec.ramp_ns)}), "
               "whose requests count toward the amount, as in fio, and are not measured: "
               "shorten ramp_time, or make the workload larger or time_based")
    elif counted:
        why = (f"{threads} counted {format_duration(counted)} without a request or an error, "
               "as when a thread gets the CPU only after its runtime is over")
    else:
        why = f"the engine counted no time for it: {threads} never started issuing"
    others = len(idle) - 1
    more = f" (and {others} other job{'s' if others > 1 else ''} too)" if others else ""
    return f"job {index} asked for {asked} and {done}: {why}{more}"
