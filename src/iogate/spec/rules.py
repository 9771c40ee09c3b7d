"""Rules between the fields of a job: what one field's value asks of another's.

Each rule yields the fields it concerns, most specific first, and a message; a job that
breaks one is reported at the first of those fields the user wrote (psync needs iodepth
1, direct I/O needs 512-byte aligned blocks, a mixed workload's rate needs both
directions...). What an engine allows is read from :mod:`iogate.engine.catalog`.
:func:`mix_warnings` says what is allowed but is likely not what was meant: per-direction
rates that set another mix than the rwmixread written beside them.
:func:`unmeasurable` is the rule between a job and the metrics expected of it: what it can
never measure (``write.iops`` of a ``randread``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING

from iogate.engine import catalog
from iogate.engine.limits import VERIFY_HEADER
from iogate.errors import spoken
from iogate.spec.blocks import BS_KEYS, DEFAULT_BS, shares_of
from iogate.spec.data import verify_min_block
from iogate.spec.fields import SECTOR, queued_engines
from iogate.spec.keys import PLAIN, JobKeys
from iogate.spec.modes import (
    DIRECTIONS,
    MIXED,
    RANDOM,
    TRIM_MODES,
    Direction,
    FieldDirection,
    directions_of,
    field_direction,
    field_directions_of,
)
from iogate.spec.rates import split_by_mix
from iogate.units import format_count, format_size, format_size_exact

if TYPE_CHECKING:
    from iogate.metrics import MetricPath
    from iogate.spec.rates import Rates


def _engine(w: JobKeys) -> catalog.Engine:
    engine = catalog.get(w.ioengine)
    if engine is None:  # IoEngine takes only the catalog's names
        raise LookupError(f"no engine '{w.ioengine}' in the catalog")
    return engine


def block_table(w: JobKeys, direction: Direction) -> list[tuple[int, int, Fraction]]:
    """The direction's request sizes: (lo, hi, share in percent), shares summing to 100.
    Trims take the write sizes (see iogate.spec.modes)."""
    direction = field_direction(direction)
    if w.bssplit is not None:
        entries = getattr(w.bssplit, direction)
        if entries is None:
            return [(DEFAULT_BS, DEFAULT_BS, Fraction(100))]
        return [(bs, bs, share) for bs, share in shares_of(entries)]
    if w.bsrange is not None:
        r = getattr(w.bsrange, direction)
        return [(r.lo, r.hi, Fraction(100))]
    bs = getattr(w.bs, direction)
    return [(bs, bs, Fraction(100))]


BATCH_KEYS = ("iodepth_batch_submit", "iodepth_batch_complete_min",
              "iodepth_batch_complete_max", "iodepth_low")


def _batch_rules(w: JobKeys, engine: catalog.Engine) -> Iterator[tuple[tuple[str, ...], str]]:
    """Submission batching counts requests of an asynchronous engine's queue."""
    for key in BATCH_KEYS:
        n = getattr(w, key)
        if n is None:
            continue
        if not engine.queued:
            yield (key, "ioengine"), (
                f"{key} batches the requests of an asynchronous engine; {engine.name} issues "
                f"one at a time: remove it or use {queued_engines()}")
        elif w.iodepth < 2:
            yield (key, "iodepth"), (f"{key} batches requests of a queue, but iodepth is 1: "
                                     f"raise iodepth or remove {key}")
        elif n > w.iodepth:
            yield (key, "iodepth"), (f"{key} ({n}) must be at most iodepth ({w.iodepth})")
    low, high = w.iodepth_batch_complete_min, w.iodepth_batch_complete_max
    if high is not None and high < (low or 1):
        yield ("iodepth_batch_complete_max", "iodepth_batch_complete_min"), (
            f"iodepth_batch_complete_max ({high}) must be at least iodepth_batch_complete_min "
            f"({low or 1})")


def _prio_rules(w: JobKeys, engine: catalog.Engine
                ) -> Iterator[tuple[tuple[str, ...], str]]:
    """Command priorities: one way to give them, on an engine that passes them."""
    if w.cmdprio_percentage is not None and w.cmdprio_bssplit is not None:
        yield ("cmdprio_bssplit", "cmdprio_percentage"), (
            "cmdprio_percentage and cmdprio_bssplit exclude each other (as in fio): keep "
            "one")
    for key in ("cmdprio_percentage", "cmdprio_bssplit"):
        if getattr(w, key) is not None and not engine.cmdprio:
            yield (key, "ioengine"), (
                f"{engine.name} cannot give single requests a priority: {key} needs "
                f"{catalog.spoken_where('cmdprio', 'or')}; or set only prio / prioclass, "
                "which apply to the whole workload")


RING_KEYS = ("fixedbufs", "registerfiles", "sqthread_poll", "sqthread_poll_cpu", "hipri")


def _ring_rules(w: JobKeys, engine: catalog.Engine
                ) -> Iterator[tuple[tuple[str, ...], str]]:
    """io_uring's fast paths: on an engine that takes them, each with what it needs."""
    changed = [key for key in RING_KEYS
               if getattr(w, key) != JobKeys.model_fields[key].default]
    if changed and not engine.ring:
        yield (changed[0], "ioengine"), (
            f"{changed[0]} is an option of {catalog.spoken_where('ring', 'and')}; "
            f"{engine.name} takes none of {', '.join(RING_KEYS)}")
        return
    if w.sqthread_poll_cpu is not None and not w.sqthread_poll:
        yield ("sqthread_poll_cpu", "sqthread_poll"), (
            "sqthread_poll_cpu places the submission polling thread: set sqthread_poll: true")
    if w.hipri and not w.direct:
        yield ("hipri", "direct"), (
            "hipri polls for completions of direct I/O only: set direct: true")


def workload_rules(w: JobKeys) -> Iterator[tuple[tuple[str, ...], str]]:
    """Rules between fields: (fields to blame, most specific first; message)."""
    dirs = directions_of(w.rw)
    writes = "write" in dirs
    engine = _engine(w)
    if w.iodepth > engine.max_depth:
        if not engine.queued:
            yield ("iodepth", "ioengine"), (
                f"{engine.name} is synchronous: iodepth must be {engine.max_depth}; use "
                f"{queued_engines()} for queue depth")
        else:
            yield ("iodepth", "ioengine"), (
                f"{engine.name} keeps at most {engine.max_depth} requests in flight: iodepth "
                f"must be at most {engine.max_depth}")
    yield from _batch_rules(w, engine)
    yield from _prio_rules(w, engine)
    yield from _ring_rules(w, engine)
    if w.numa_cpu_nodes is not None and w.cpus_allowed is not None:
        yield ("numa_cpu_nodes", "cpus_allowed"), (
            "numa_cpu_nodes and cpus_allowed both place the threads: keep one")
    if w.direct and not engine.direct:
        yield ("direct", "ioengine"), (
            f"{engine.name} cannot bypass the page cache: direct does not apply to it; remove "
            f"direct or use {spoken(e.name for e in catalog.engines() if e.direct and e.does_io)}")
    given = [k for k in BS_KEYS if k in w.model_fields_set]
    if len(given) > 1:
        yield (given[0], given[1]), f"{given[1]} and {given[0]} exclude each other: give one"
    if w.rwmixwrite is not None and w.rw not in MIXED:
        yield ("rwmixwrite", "rw"), (
            f"rwmixwrite applies only to {spoken(MIXED, 'and')}, not to {w.rw}")
    elif w.rwmixread is not None and w.rw not in MIXED:
        yield ("rwmixread", "rw"), (
            f"rwmixread applies only to {spoken(MIXED, 'and')}, not to {w.rw}")
    elif w.rwmixwrite is not None and w.rwmixread is not None \
            and w.rwmixread + w.rwmixwrite != 100:
        yield ("rwmixwrite", "rwmixread"), (f"rwmixread ({w.rwmixread}) and rwmixwrite "
                                            f"({w.rwmixwrite}) must add up to 100")
    if w.time_based and w.runtime is None:
        yield ("time_based", "runtime"), "time_based needs a runtime, e.g. 'runtime: 30s'"
    tables = {d: block_table(w, d) for d in dirs}
    if w.direct:
        for d in dirs:
            bad = [lo for lo, _, _ in tables[d] if lo % SECTOR]
            if bad:
                key = next((k for k in BS_KEYS if k in w.model_fields_set), "bs")
                yield (key, "direct"), (f"direct I/O needs block sizes that are a multiple of "
                                        f"{SECTOR} bytes; {d} bs is {bad[0]}")
                break
        if isinstance(w.offset, int) and w.offset % SECTOR:
            yield ("offset", "direct"), (f"direct I/O needs an offset that is a multiple of "
                                         f"{SECTOR} bytes, got {w.offset}")
        if w.blockalign is not None:
            for d in dirs:
                align = getattr(w.blockalign, field_direction(d))
                if align % SECTOR:
                    yield ("blockalign", "direct"), (
                        f"direct I/O needs a blockalign that is a multiple of {SECTOR} bytes; "
                        f"{d} blockalign is {align}")
                    break
    largest = max(hi for d in dirs for _, hi, _ in tables[d])
    files = len(w.filename) if isinstance(w.filename, list) else 1
    if not isinstance(w.size, int):  # the target's size, or a share of it (plan.sized)
        what, fix = ("size is required", "give size") if w.size is None else (
            f"size {w.size} is a share of the target", "give size in bytes")
        if not engine.does_io:
            yield ("size",), (f"{what}: the {engine.name} engine has no file to take a size "
                              f"from" + ("" if w.size is None else f"; {fix}"))
        elif not w.filename and w.fill_device and w.size is None:
            yield ("fill_device", "filename"), (
                "fill_device without size fills the filesystem of its file: give the "
                "filename on the filesystem to fill (or a size)")
        elif not w.filename:
            yield ("size",), (f"{what}: without a filename the workload runs on a temporary "
                              f"file, which has no size of its own; {fix} (only an existing "
                              "file or device is used whole without one)")
    elif w.size // files < largest:
        per_file = f" per file ({files} files share it)" if files > 1 else ""
        yield ("size", "bs"), (f"size{per_file} ({format_size(w.size // files)}) is smaller "
                               f"than the block size ({format_size(largest)})")
    elif w.blockalign is not None and max(w.blockalign.read, w.blockalign.write) > w.size:
        yield ("blockalign", "size"), (
            f"blockalign ({format_size(max(w.blockalign.read, w.blockalign.write))}) is more "
            f"than size ({format_size(w.size)}): no offset but the first is aligned")
    yield from _fill_rules(w, engine)
    for key, row in PLAIN.items():  # a plain key's one rule: the key it needs
        if row.needs and key in w.model_fields_set and not getattr(w, row.needs):
            yield (key, row.needs), (f"{key} does nothing without {row.needs}: set "
                                     f"{row.needs}, or remove {key}")

    if not w.allow_file_create and not w.filename and engine.does_io:
        yield ("allow_file_create",), ("allow_file_create: false needs a filename: without "
                                       "one the workload runs on a temporary file iogate "
                                       "creates")
    yield from _rate_rules(w, dirs)
    yield from _data_rules(w, writes)
    if w.sync != "none" and not writes:
        yield ("sync", "rw"), f"sync opens the files for durable writes, but {w.rw} never writes"
    elif w.sync != "none" and w.ioengine == "mmap":
        yield ("sync", "ioengine"), ("mmap writes reach the file through memory, where "
                                     "O_SYNC has no effect: use fsync: N, or another engine")
    yield from _verify_rules(w, tables)
    if w.random_distribution is not None and w.random_distribution.kind != "random" \
            and w.rw not in RANDOM:
        yield ("random_distribution", "rw"), (
            f"random_distribution applies only to {spoken(RANDOM, 'and')}, not to {w.rw}")
    if w.random_sequence_stride is not None and (
            w.random_distribution is None or w.random_distribution.kind != "sequence"):
        yield ("random_sequence_stride", "random_distribution"), (
            "random_sequence_stride moves the blocks of random_distribution: sequence:..., "
            "which this workload does not have")
    if w.randseed is not None and w.randrepeat is False:
        yield ("randrepeat", "randseed"), ("randrepeat: false asks for a new seed every run, "
                                           "but randseed fixes it: give one of them")
    if w.thinktime_blocks is not None and w.thinktime is None:
        yield ("thinktime_blocks", "thinktime"), "thinktime_blocks needs a thinktime"
    if w.fsync is not None and w.fdatasync is not None:
        yield ("fdatasync", "fsync"), "fsync and fdatasync exclude each other: give one"
    for key in ("fsync", "fdatasync", "end_fsync"):
        if getattr(w, key) not in (None, False) and not writes:
            yield (key, "rw"), f"{key} syncs after writes, but {w.rw} never writes"
        if getattr(w, key) not in (None, False) and not engine.does_io:
            yield (key, "ioengine"), f"{key} needs a file; the {engine.name} engine has none"
    if w.seq_skip and w.rw in RANDOM:
        yield ("rw", "seq_skip"), (f"seq_skip moves the offset of sequential workloads; {w.rw} "
                                   "draws every offset at random")
    elif w.seq_skip and w.rw in TRIM_MODES:
        yield ("rw", "seq_skip"), (f"seq_skip moves the offset of read, write and rw "
                                   f"workloads; {w.rw} trims the region in one pass: remove "
                                   "seq_skip")


def _fill_rules(w: JobKeys, engine: catalog.Engine) -> Iterator[tuple[tuple[str, ...], str]]:
    """fill_device: one sequential pass of writes that ends when the filesystem is full."""
    if not w.fill_device:
        return
    if w.rw != "write":
        yield ("fill_device", "rw"), (f"fill_device writes sequentially until the filesystem "
                                      f"is full: rw must be write, not {w.rw}")
    if w.time_based:
        yield ("fill_device", "time_based"), ("fill_device ends when the filesystem is full: "
                                              "it cannot be time_based")
    if w.ramp_time:
        yield ("fill_device", "ramp_time"), ("fill_device counts every write up to the full "
                                             "filesystem: it takes no ramp_time")
    if not engine.does_io:
        yield ("fill_device", "ioengine"), f"fill_device needs a file; {engine.name} has none"


def _rate_rules(w: JobKeys, dirs: tuple[Direction, ...]
                ) -> Iterator[tuple[tuple[str, ...], str]]:
    mixed = w.rw in MIXED
    for key, rates in (("rate_iops", w.rate_iops), ("rate", w.rate)):
        if rates is None:
            continue
        if len(dirs) == 2 and not mixed:
            yield (key, "rw"), (f"{key} does not apply to {w.rw}: its trims and writes "
                                "come in pairs; limit a trim or a write workload instead")
            continue
        for d in DIRECTIONS:
            if getattr(rates, d) is not None and d not in field_directions_of(w.rw):
                yield (key, "rw"), f"{key} sets a {d} rate, but {w.rw} never {d}s"
        if rates.total is None and mixed and (rates.read is None) != (
                rates.write is None):
            yield (key,), (f"{key} limits only one direction of a mixed workload: give the "
                           "total, or both directions")
        if rates.total is not None and mixed:
            mix = w.rwmixread if w.rwmixread is not None else 50
            read, write = split_by_mix(rates.total, mix)
            if read == 0 or write == 0:
                starved = "reads" if read == 0 else "writes"
                yield (key, "rwmixread"), (
                    f"{key} {rates.total} split by rwmixread {mix} leaves {starved} no rate; "
                    "raise the total or give both directions")
    if w.rate_process is not None and w.rate is None and w.rate_iops is None:
        yield ("rate_process",), "rate_process needs rate or rate_iops"


MIX_KEYS = ("rwmixread", "rwmixwrite")


def _mean_bs(w: JobKeys, direction: FieldDirection) -> Fraction:
    """A direction's mean request size: a range spreads evenly over the multiples of its
    smallest size."""
    return sum((share * (lo + hi // lo * lo) / 2 for lo, hi, share in block_table(w, direction)),
               Fraction(0)) / 100


def _direction_rate(rates: Rates | None, direction: FieldDirection, mix: int) -> int | None:
    """A direction's part of a rate limit: its own, or its share of the total by the mix."""
    if rates is None:
        return None
    if rates.total is None:
        return rates.read if direction == "read" else rates.write
    read, write = split_by_mix(rates.total, mix)
    return read if direction == "read" else write


def _rates_text(key: str, rates: Rates, mix: int) -> str:
    """A rate as a suite writes it: ``rate_iops {read: 100, write: 500}``; a total with
    how the mix splits it."""
    def one(v: int) -> str:
        return format_size_exact(v) + "/s" if key == "rate" else str(v)

    if rates.total is not None:
        unit = " in bytes" if key == "rate" else ""
        return f"{key} {one(rates.total)}, split {mix}:{100 - mix}{unit},"
    parts = ", ".join(f"{d}: {one(v)}" for d in DIRECTIONS if (v := getattr(rates, d)))
    return f"{key} {{{parts}}}"


def _pct(x: Fraction) -> str:
    return f"{float(x):.1f}".removesuffix(".0") + "%"


def mix_warnings(w: JobKeys, written: Collection[str]
                 ) -> Iterator[tuple[tuple[str, ...], str]]:
    """The mix of requests a mixed workload's rates make, when it is not the one its
    rwmixread (or rwmixwrite, among the keys ``written``) asks for: under a rate each
    direction keeps to its own schedule, so per-direction rates, and a total bandwidth over
    block sizes that differ between the directions, decide the mix (in fio too: it issues
    the direction that is behind its rate). (Fields to blame, the rate first; message.)
    A mix left to its default asks for nothing, and a total rate_iops is split by the mix."""
    mix_key = next((k for k in MIX_KEYS if k in written), None)
    if w.rw not in MIXED or mix_key is None or w.rwmixread is None:
        return
    if w.rate is None and (w.rate_iops is None or w.rate_iops.total is not None):
        return
    mix = w.rwmixread
    per_second: dict[str, Fraction] = {}
    for d in DIRECTIONS:
        limits = []
        if iops := _direction_rate(w.rate_iops, d, mix):
            limits.append(Fraction(iops))
        if bw := _direction_rate(w.rate, d, mix):
            limits.append(bw / _mean_bs(w, d))
        if not limits:
            return  # a direction without a rate: _rate_rules says so
        per_second[d] = min(limits)
    reads, writes = per_second["read"], per_second["write"]
    share = 100 * reads / (reads + writes)
    if abs(share - mix) < Fraction(1, 2):
        return
    keys = [k for k in ("rate_iops", "rate") if getattr(w, k) is not None]
    what = " and ".join(_rates_text(k, getattr(w, k), mix) for k in keys)
    counts = {d: f"{format_count(float(n))} {d}s/s" for d, n in per_second.items()}
    if w.rate is not None:  # the sizes that turn bytes into requests
        for d in DIRECTIONS:
            one = len(table := block_table(w, d)) == 1 and table[0][0] == table[0][1]
            counts[d] += f" of {'' if one else 'a mean '}{format_size(float(_mean_bs(w, d)))}"
    total = max(1, round(reads + writes))
    split = split_by_mix(total, mix)
    into = f"{mix_key} splits it into {split[0]} reads/s and {split[1]} writes/s"
    if keys == ["rate_iops"]:
        fix = f"give the total, 'rate_iops: {total}' ({into})"
    elif keys == ["rate"]:
        fix = (f"limit requests instead, 'rate_iops: {total}' in place of rate ({into}), or "
               f"give the directions rates in the ratio {mix}:{100 - mix} of requests")
    else:
        fix = f"give one total, 'rate_iops: {total}' in place of both ({into})"
    yield (keys[0], mix_key), (
        f"{what} {'set' if len(keys) > 1 else 'sets'} the mix: {counts['read']} and "
        f"{counts['write']}, {_pct(share)} reads, not the {mix}% that '{mix_key}: "
        f"{getattr(w, mix_key)}' asks for; each direction keeps to its own rate, so the rates "
        f"decide the mix. For {mix}% reads, {fix}; or drop {mix_key} if the rates are what "
        "you meant")


def verifies(w: JobKeys) -> bool:
    """Whether the job checks what it writes."""
    return w.verify is not None and w.verify != "none"


def _verify_rules(w: JobKeys, tables: Mapping[Direction, list[tuple[int, int, Fraction]]]
                  ) -> Iterator[tuple[tuple[str, ...], str]]:
    if not verifies(w):
        if w.verify_backlog is not None:
            yield ("verify_backlog", "verify"), ("verify_backlog needs verify, e.g. "
                                                 "'verify: crc32c'")
        if w.verify_fatal:
            yield ("verify_fatal", "verify"), "verify_fatal needs verify, e.g. 'verify: crc32c'"
        return
    if w.rw in TRIM_MODES:
        yield ("verify", "rw"), (f"verify checks the blocks a job writes, and {w.rw} trims "
                                 "them (a trimmed block holds nothing to check): verify needs "
                                 "rw write or randwrite")
        return
    if "write" not in directions_of(w.rw):
        yield ("verify", "rw"), (f"verify checks the blocks a job writes: it needs rw write, "
                                 f"randwrite, rw or randrw, not {w.rw} (it reads back what the "
                                 "job wrote in the same run)")
        return
    table = tables["write"]
    if len(table) > 1 or table[0][0] != table[0][1]:
        key = next(k for k in ("bssplit", "bsrange") if getattr(w, k) is not None)
        yield (key, "verify"), (f"verify needs one block size for writes; {key} gives several: "
                                "use bs")
        return
    bs = table[0][0]
    smallest = verify_min_block(str(w.verify))
    if bs < smallest or bs % 8:
        key = next((k for k in BS_KEYS if k in w.model_fields_set), "bs")
        held = "its header" if smallest == VERIFY_HEADER else f"its header and {w.verify} digest"
        yield (key, "verify"), (f"verify needs a write block size of at least {smallest} "
                                f"bytes ({held}) and a multiple of 8, got {bs}; e.g. "
                                "'bs: 4k'")
    reads = tables.get("read", [])
    if w.rw == "rw" and (len(reads) != 1 or reads[0][0] != bs or reads[0][1] != bs):
        key = next((k for k in BS_KEYS if k in w.model_fields_set), "bs")
        yield (key, "verify"), (f"verify of rw, a sequential mix, needs reads of the write "
                                f"block size ({bs}) too, so that every write starts on a block; "
                                "or use randrw")
    if w.blockalign is not None and w.blockalign.write not in (0, bs):
        yield ("blockalign", "verify"), (
            f"verify keeps one block at each multiple of the block size: blockalign "
            f"({w.blockalign.write}) must be the block size ({bs}), or left out")
    if w.numjobs > 1:
        yield ("numjobs", "verify"), (f"verify needs numjobs 1: {w.numjobs} threads would "
                                      "overwrite each other's blocks; raise iodepth for more "
                                      "load")
    if not _engine(w).does_io:
        yield ("ioengine", "verify"), (f"verify needs a file; the {w.ioengine} engine writes "
                                       "nothing")


def _data_rules(w: JobKeys, writes: bool) -> Iterator[tuple[tuple[str, ...], str]]:
    data_keys = ("buffer_compress_percentage", "buffer_compress_chunk", "buffer_pattern",
                 "dedupe_percentage", "zero_buffers", "refill_buffers")
    if not writes:
        for key in data_keys:
            if key in w.model_fields_set and getattr(w, key) not in (None, False):
                yield (key, "rw"), f"{key} shapes written data, but {w.rw} never writes"
                return
    compress = w.buffer_compress_percentage or 0
    dedupe = w.dedupe_percentage or 0
    if w.zero_buffers:
        for key, value in (("buffer_compress_percentage", compress),
                           ("dedupe_percentage", dedupe)):
            if value > 0:
                yield (key, "zero_buffers"), (f"zero_buffers writes only zeros; it cannot be "
                                              f"combined with {key}")
        if w.buffer_pattern is not None:
            yield ("buffer_pattern", "zero_buffers"), ("zero_buffers writes only zeros; it "
                                                       "cannot be combined with buffer_pattern")
    if w.buffer_compress_chunk is not None and w.buffer_compress_percentage is None:
        yield ("buffer_compress_chunk",), "buffer_compress_chunk needs buffer_compress_percentage"
    if w.refill_buffers is False and (compress or dedupe):
        yield ("refill_buffers",), ("compressible or deduplicable data needs new buffer "
                                    "contents for every write; remove refill_buffers: false")


_DOES = {"read": "reads", "write": "writes", "trim": "trims"}
UNMEASURABLE_KEYS = ("rw", "fsync", "fdatasync", "end_fsync", "verify")  # what it reads


def unmeasurable(w: JobKeys, metric: MetricPath) -> str | None:
    """Why ``w`` can never measure ``metric`` whatever happens in its run, or None: a
    direction it issues no request in, written data when it never writes, sync calls when it
    makes none, verification when it does not verify. Counts are always measured (0 when
    nothing happened: ``write.ios: "== 0"`` of a randread is a fair check)."""
    if metric.family.counted:
        return None  # a count is measured, 0, when nothing it counts happened
    dirs = directions_of(w.rw)
    if metric.scope in _DOES and metric.scope not in dirs:
        measured = ", ".join(f"{d}.*" for d in dirs)
        return (f"{w.rw} never {_DOES[metric.scope]}, so {metric.scope}.* is never "
                f"measured; it measures {measured} and total.*")
    if metric.scope == "data" and "write" not in dirs:
        return f"data.* measures the data written, but {w.rw} never writes"
    if metric.scope == "sync" and not (w.fsync or w.fdatasync or w.end_fsync):
        return ("sync.* measures fsync and fdatasync calls, and the workload makes none "
                "(fsync: N, fdatasync: N or end_fsync: true make them)")
    if metric.scope == "verify" and not verifies(w):
        return ("verify.* measures verification, and the workload does not verify "
                "(verify: crc32c makes it)")
    return None
