"""Lowering: a validated workload (or precondition step) to the engine's job spec.

Everything the suite language means is decided here, in one place: percentages become
parts per million that sum exactly to 1_000_000, a total rate is split by the mix, data
options imply what they need (compressible or deduplicable data gets new contents for
every write), and the seed honours ``randseed`` and ``randrepeat``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction

from iogate.job import PPM, BsEntry, JobSpec, PrioEntry, Zone, ioprio_value
from iogate.spec.fields import cpu_list, node_list, numa_mem_policy
from iogate.spec.keys import PLAIN
from iogate.spec.models import JobFields, PreconditionStep, Workload
from iogate.spec.modes import MIXED, Direction, directions_of, field_directions_of
from iogate.spec.rates import Rates, split_by_mix
from iogate.spec.rules import block_table

__all__ = ["exit_masks", "job_seed", "lower", "lower_step", "split_rates", "to_ppm"]



def to_ppm(shares: Sequence[Fraction]) -> list[int]:
    """Shares (any positive total) in parts per million, summing to exactly PPM.

    Largest remainder: each share is rounded down, and the ppm left over go one each to
    the largest remainders (the earlier entry first on a tie), so every result is within
    1 ppm of its exact value and the same input always gives the same output.
    """
    if len(shares) == 1 and shares[0] > 0:
        return [PPM]  # one share is the whole (the common case: one block size)
    total = sum(shares, Fraction(0))
    if total <= 0 or any(s < 0 for s in shares):
        raise ValueError("shares must be non-negative with a positive total")
    exact = [s * PPM / total for s in shares]
    out = [int(x) for x in exact]  # floor: every x >= 0
    left = PPM - sum(out)
    order = sorted(range(len(exact)), key=lambda i: (-(exact[i] - out[i]), i))
    for i in order[:left]:
        out[i] += 1
    return out


def split_rates(rates: Rates | None, rw: str, rwmixread: int) -> tuple[int, int]:
    """(read, write) limits per second; 0 is unlimited. A total is split by the mix."""
    if rates is None:
        return 0, 0
    if rates.total is None:
        return rates.read or 0, rates.write or 0
    dirs = field_directions_of(rw)  # a trim's rate is the write one (spec.modes)
    if len(dirs) == 2:
        return split_by_mix(rates.total, rwmixread)
    return (rates.total, 0) if dirs == ("read",) else (0, rates.total)


def job_seed(job: JobFields, seed: int) -> int:
    """randseed when given; a fresh random seed when randrepeat is false; else ``seed``."""
    if job.randseed is not None:
        return job.randseed
    if not job.randrepeat:
        return int.from_bytes(os.urandom(8), "little")
    return seed


def _bs_entries(job: JobFields, direction: Direction) -> tuple[int, list[BsEntry]]:
    """The direction's fixed block size, or its table (then the size is the smallest)."""
    table = block_table(job, direction)
    weights = to_ppm([share for _, _, share in table])
    entries = [BsEntry(lo=lo, hi=hi, weight=w)
               for (lo, hi, _), w in zip(table, weights, strict=True) if w > 0]
    if len(entries) == 1 and entries[0].lo == entries[0].hi:
        return entries[0].lo, []  # one fixed size: no table needed
    return min(e.lo for e in entries), entries


def _zones(job: JobFields) -> list[Zone]:
    dist = job.random_distribution
    if dist is None or dist.kind != "zoned":
        return []
    access = to_ppm([Fraction(repr(z.access)) for z in dist.zones])
    size = to_ppm([Fraction(repr(z.size)) for z in dist.zones])
    return [Zone(access=a, size=s) for a, s in zip(access, size, strict=True) if a or s]


def _job_ioprio(job: JobFields) -> int:
    """The workload's own I/O priority (prio, prioclass), 0 when it sets neither."""
    if job.prio is None and job.prioclass is None:
        return 0
    return ioprio_value(job.prioclass or 0, job.prio or 0)


def _cmdprio(job: JobFields, direction: str) -> list[PrioEntry]:
    """The direction's command priority entries (shares in ppm of the requests of their
    size), from cmdprio_percentage or cmdprio_bssplit with cmdprio_class and cmdprio."""
    if direction not in directions_of(job.rw):
        return []
    classes, levels = job.cmdprio_class, job.cmdprio
    prio_class = getattr(classes, direction) if classes else None
    level = getattr(levels, direction) if levels else None
    default = ioprio_value(1 if prio_class is None else prio_class, level or 0)  # rt

    def share(pct: float | int) -> int:
        return int(Fraction(repr(pct)) * PPM / 100) if isinstance(pct, float) \
            else pct * PPM // 100

    if job.cmdprio_percentage is not None:
        pct = getattr(job.cmdprio_percentage, direction)
        return [PrioEntry(bs=0, share=share(pct), ioprio=default)] if pct else []
    split = getattr(job.cmdprio_bssplit, direction) if job.cmdprio_bssplit else None
    return [PrioEntry(bs=e.bs, share=share(e.pct),
                      ioprio=default if e.prio_class is None and e.level is None
                      else ioprio_value(e.prio_class or 0, e.level or 0))
            for e in split or () if e.pct]


def _job(job: JobFields, filenames: Sequence[str], seed: int) -> JobSpec:
    mixed = job.rw in MIXED
    mix = (job.rwmixread if job.rwmixread is not None else 50) if mixed else 100
    bs_read, split_read = _bs_entries(job, "read")
    bs_write, split_write = _bs_entries(job, "write")
    iops_read, iops_write = split_rates(job.rate_iops, job.rw, mix)
    bytes_read, bytes_write = split_rates(job.rate, job.rw, mix)
    dist = job.random_distribution
    compress = job.buffer_compress_percentage
    if compress is None and job.buffer_pattern is not None:
        compress = 100  # a pattern alone: the whole buffer is the pattern
    # Compressible or deduplicable data only means something if every write has new
    # contents: a buffer filled once and written again is one block, deduplicated away.
    refill = bool(job.refill_buffers) or compress is not None \
        or job.dedupe_percentage is not None
    files = list(filenames)
    policy = numa_mem_policy(job.numa_mem_policy) if job.numa_mem_policy is not None else \
        ("none", ())
    return JobSpec(
        engine=job.ioengine,
        rw=job.rw,
        bs_read=bs_read,
        bs_write=bs_write,
        iodepth=job.iodepth,
        numjobs=job.numjobs,
        # none or a share: the target's, resolved before a run (plan.sized)
        size=job.size if isinstance(job.size, int) else 0,
        offset=job.offset if isinstance(job.offset, int) else 0,
        runtime_ns=job.runtime or 0,
        ramp_ns=job.ramp_time or 0,
        time_based=job.time_based,
        direct=job.direct,
        rwmixread=mix,
        filename=files[0] if files else "",
        seed=job_seed(job, seed),
        filenames=files if len(files) > 1 else [],
        bssplit_read=split_read,
        bssplit_write=split_write,
        blockalign_read=job.blockalign.read if job.blockalign else 0,
        blockalign_write=job.blockalign.write if job.blockalign else 0,
        rate_iops_read=iops_read,
        rate_iops_write=iops_write,
        rate_bytes_read=bytes_read,
        rate_bytes_write=bytes_write,
        rate_process=job.rate_process or "linear",
        dist="uniform" if dist is None or dist.kind == "random" else dist.kind,
        dist_param=dist.param if dist is not None and dist.param is not None else 0.0,
        zones=_zones(job),
        sequence=list(dist.blocks) if dist is not None and dist.kind == "sequence" else [],
        sequence_stride=bool(job.random_sequence_stride),
        thinktime_ns=job.thinktime or 0,
        thinktime_blocks=job.thinktime_blocks or 0,
        sync_kind="fsync" if job.fsync else "fdatasync" if job.fdatasync else "none",
        sync_every=job.fsync or job.fdatasync or 0,
        compress_pct=compress or 0,
        compress_chunk=job.buffer_compress_chunk or 0,
        dedupe_pct=job.dedupe_percentage or 0,
        pattern=job.buffer_pattern or b"",
        refill=refill,
        zero_buffers=job.zero_buffers,
        # The null engine has no file whose cache could be dropped.
        invalidate=job.invalidate and job.ioengine != "null",
        random_map=not job.norandommap,
        file_service=job.file_service_type,
        cpus=cpu_list(job.cpus_allowed) if job.cpus_allowed is not None else (),
        cpus_split=job.cpus_allowed_policy == "split",
        numa_cpu_nodes=node_list(job.numa_cpu_nodes) if job.numa_cpu_nodes is not None else (),
        numa_mem_policy=policy[0],
        numa_mem_nodes=policy[1],
        fixedbufs=job.fixedbufs,
        registerfiles=job.registerfiles,
        sqpoll=job.sqthread_poll,
        sqpoll_cpu=job.sqthread_poll_cpu,
        hipri=job.hipri,
        write_layout="data" if job.overwrite else
        {"native": "allocate", "keep": "keep_size"}.get(job.fallocate, job.fallocate),
        verify=job.verify or "none",
        verify_backlog=job.verify_backlog or 0,
        verify_fatal=job.verify_fatal,
        io_timeout_ns=job.io_timeout or 0,
        io_limit_bytes=job.io_size or 0,
        io_limit_ios=job.number_ios or 0,
        end_fsync=job.end_fsync,
        seq_skip=job.seq_skip,
        start_delay_ns=job.startdelay,
        # The file grows as it is written, until the filesystem is full: no layout.
        fill=job.fill_device,
        open_sync=job.sync,
        no_layout=job.fill_device,
        flow_weight=job.flow or 0,
        batch_submit=job.iodepth_batch_submit or 0,
        batch_complete_min=job.iodepth_batch_complete_min or 0,
        batch_complete_max=job.iodepth_batch_complete_max or 0,
        depth_low=job.iodepth_low or 0,
        ioprio=_job_ioprio(job),
        cmdprio_read=_cmdprio(job, "read"),
        cmdprio_write=_cmdprio(job, "write"),
        plain=plain_values(job),
    )


def plain_values(job: JobFields) -> dict[str, int]:
    """The plain keys set (iogate.spec.keys.PLAIN), by the job struct's member: durations
    in ns and sizes in bytes as validated, true as 1."""
    out = {}
    for key, row in PLAIN.items():
        value = getattr(job, key, None)
        if value:
            out[row.member] = int(value)
    return out


def lower(workload: Workload, *, filenames: Sequence[str], seed: int) -> JobSpec:
    """The job spec of a workload on ``filenames`` (the targets the runner chose).

    ``seed`` is the runner's per-case seed, used unless randseed or randrepeat say otherwise.
    """
    return replace(_job(workload, filenames, seed), verify_state=workload.verify_state or "")


def lower_step(step: PreconditionStep, *, filenames: Sequence[str], seed: int) -> JobSpec:
    """The job spec of one pass of a precondition step (the runner runs ``step.loops``)."""
    return _job(step, filenames, seed)



def exit_masks(workloads: Sequence[Workload]) -> list[int]:
    """Each job's exit_mask in a session of ``workloads`` (in job order): exitall true stops
    every job of the session, a list the jobs of the workloads it names (the loader made
    sure a list meets at most 64 jobs)."""
    masks = []
    for w in workloads:
        if w.exitall is True:
            masks.append((1 << 64) - 1)
        elif w.exitall:
            masks.append(sum(1 << j for j, other in enumerate(workloads)
                             if other.name in w.exitall))
        else:
            masks.append(0)
    return masks
