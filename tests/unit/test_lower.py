"""Lowering workloads to engine job specs: shares in ppm, rates split by the mix, data, seeds."""

import textwrap
from fractions import Fraction

import pytest

from iogate.job import PPM, BsEntry, Zone
from iogate.lower import job_seed, lower, lower_step, split_rates, to_ppm
from iogate.spec import load_suite

MiB = 1 << 20


def case(tmp_path, body: str, env=None):
    f = tmp_path / "s.suite.yaml"
    f.write_text("suite: s\nworkloads:\n  - name: w\n    size: 1MiB\n"
                 + textwrap.indent(textwrap.dedent(body), "    "))
    return load_suite(f, env=env or {}).cases[0]


def spec(tmp_path, body: str, files=("/var/tmp/f",), seed=7):
    return lower(case(tmp_path, body).workload, filenames=list(files), seed=seed)


def test_plain_workload(tmp_path):
    s = spec(tmp_path, "rw: randrw\nrwmixread: 70\nbs: 4k,64k\niodepth: 8\nruntime: 2s\n")
    assert (s.engine, s.rw, s.bs_read, s.bs_write, s.iodepth, s.rwmixread, s.runtime_ns) == (
        "io_uring", "randrw", 4096, 65536, 8, 70, 2 * 10**9)
    assert (s.bssplit_read, s.bssplit_write, s.filename, s.filenames, s.seed) == (
        [], [], "/var/tmp/f", [], 7)
    assert (s.dist, s.rate_iops_read, s.compress_pct, s.refill, s.invalidate) == (
        "uniform", 0, 0, False, True)


def test_bssplit_and_bsrange(tmp_path):
    s = spec(tmp_path, "bssplit: 4k:8k:16k\n")
    assert s.bssplit_read == [BsEntry(4096, 4096, 333334), BsEntry(8192, 8192, 333333),
                              BsEntry(16384, 16384, 333333)]
    assert s.bs_read == 4096
    r = spec(tmp_path, "rw: randrw\nbsrange: 1k-4k,8k-64k\n")
    assert r.bssplit_read == [BsEntry(1024, 4096, PPM)]
    assert r.bssplit_write == [BsEntry(8192, 65536, PPM)]
    zero = spec(tmp_path, "bssplit: 4k/0:8k/100\n")
    assert zero.bssplit_read == []
    assert zero.bs_read == 8192  # a 0% entry never runs


@pytest.mark.parametrize(("body", "expected"), [
    ("rw: randrw\nrwmixread: 70\nrate_iops: 1000\n", (700, 300)),
    ("rw: randrw\nrwmixread: 33\nrate_iops: 1001\n", (330, 671)),
    ("rw: randrw\nrate_iops: 700,300\n", (700, 300)),
    ("rw: randrw\nrate_iops: {read: 5, write: 9}\n", (5, 9)),
    ("rw: randread\nrate_iops: 20k\n", (20000, 0)),
    ("rw: write\nrate_iops: 20k\n", (0, 20000)),
])
def test_rates(tmp_path, body, expected):
    s = spec(tmp_path, body)
    assert (s.rate_iops_read, s.rate_iops_write) == expected
    assert (s.rate_bytes_read, s.rate_bytes_write) == (0, 0)


def test_bandwidth_rate_and_process(tmp_path):
    s = spec(tmp_path, "rw: rw\nrwmixwrite: 25\nrate: 100m\nrate_process: poisson\n")
    assert (s.rate_bytes_read, s.rate_bytes_write, s.rate_process, s.rwmixread) == (
        75 * MiB, 25 * MiB, "poisson", 75)


def test_data(tmp_path):
    s = spec(tmp_path, "rw: write\nbuffer_compress_percentage: 50\nbuffer_pattern: 0xdeadbeef\n"
                       "buffer_compress_chunk: 4k\n")
    assert (s.compress_pct, s.compress_chunk, s.pattern, s.refill) == (
        50, 4096, b"\xde\xad\xbe\xef", True)
    only_pattern = spec(tmp_path, "rw: write\nbuffer_pattern: abc\n")
    assert (only_pattern.compress_pct, only_pattern.pattern, only_pattern.refill) == (
        100, b"abc", True)
    dedupe = spec(tmp_path, "rw: write\ndedupe_percentage: 30\n")
    assert (dedupe.dedupe_pct, dedupe.refill, dedupe.compress_pct) == (30, True, 0)
    zeros = spec(tmp_path, "rw: write\nzero_buffers: true\nrefill_buffers: true\n")
    assert (zeros.zero_buffers, zeros.refill) == (True, True)


def test_distribution_pacing_sync(tmp_path):
    s = spec(tmp_path, "rw: randwrite\nrandom_distribution: zoned:50/33.3:50/66.7\n"
                       "thinktime: 2ms\nthinktime_blocks: 8\nfsync: 32\nblockalign: 8k\n")
    assert s.dist == "zoned"
    assert s.zones == [Zone(500000, 333000), Zone(500000, 667000)]
    assert (s.thinktime_ns, s.thinktime_blocks, s.sync_kind, s.sync_every) == (
        2_000_000, 8, "fsync", 32)
    assert (s.blockalign_read, s.blockalign_write) == (8192, 8192)
    z = spec(tmp_path, "rw: randread\nrandom_distribution: zipf:1.2\n")
    assert (z.dist, z.dist_param, z.zones) == ("zipf", 1.2, [])
    q = spec(tmp_path, "rw: randread\nrandom_distribution: sequence:2,0,1\n"
                       "random_sequence_stride: true\n")
    assert (q.dist, q.sequence, q.sequence_stride) == ("sequence", [2, 0, 1], True)
    assert spec(tmp_path, "rw: randread\n").sequence == []
    d = spec(tmp_path, "rw: write\nfdatasync: 4\n")
    assert (d.sync_kind, d.sync_every) == ("fdatasync", 4)


def test_files_and_null_engine(tmp_path):
    s = spec(tmp_path, "filename: [/var/tmp/a, /var/tmp/b]\n", files=["/var/tmp/a", "/var/tmp/b"])
    assert (s.filename, s.filenames) == ("/var/tmp/a", ["/var/tmp/a", "/var/tmp/b"])
    n = spec(tmp_path, "ioengine: null\n", files=[])
    assert (n.filename, n.filenames, n.invalidate) == ("", [], False)


def test_seeds(tmp_path):
    assert spec(tmp_path, "randseed: 99\n").seed == 99
    assert spec(tmp_path, "", seed=5).seed == 5
    w = case(tmp_path, "randrepeat: false\n").workload
    seeds = {job_seed(w, 5) for _ in range(4)}
    assert 5 not in seeds
    assert len(seeds) == 4  # 64 random bits: a repeat would be a bug


def test_precondition_step(tmp_path):
    c = case(tmp_path, "rw: randread\nprecondition:\n  - {rw: write, bs: 256k, loops: 2, "
                       "iodepth: 4}\n")
    step = c.preconditions[0]
    s = lower_step(step, filenames=["/var/tmp/f"], seed=3)
    assert (s.rw, s.bs_write, s.iodepth, s.size, s.seed, step.loops) == (
        "write", 256 * 1024, 4, MiB, 3, 2)


def test_to_ppm_exact_cases():
    assert to_ppm([Fraction(1)] * 3) == [333334, 333333, 333333]
    assert to_ppm([Fraction(1), Fraction(0)]) == [PPM, 0]
    assert to_ppm([Fraction(2, 3), Fraction(1, 3)]) == [666667, 333333]
    with pytest.raises(ValueError, match="shares must be non-negative with a positive total"):
        to_ppm([Fraction(0)])


def test_split_rates_without_rates():
    assert split_rates(None, "randrw", 70) == (0, 0)
