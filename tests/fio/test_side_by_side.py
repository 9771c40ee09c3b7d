"""Side by side: fio job files run by fio 3.33 and by iogate (``iogate run JOB --json``), on
the same files, compared where the outcome does not depend on the machine's speed.

The job files are tests/fio/jobs/side-*.fio, most of them fio's own examples made small. Each
comparison has a tolerance derived from its sample size (Z standard errors): the read/write
mix is binomial over the requests, a mean request size has the split's variance over the
count, the number of distinct blocks a distribution touches has the variance of a sum of
independent indicators. Counts and bytes of size-based jobs that cover their region once are
equal exactly. Where fio and iogate differ by design (fio's random map with several block
sizes, fio's hashing of zipf ranks to blocks), the test measures the difference and checks
that the import's comment says it. Rates are timing: ``bench/side_by_side.py`` compares
them, never a test.

Run with ``pytest -s`` to see the figures.
"""

from __future__ import annotations

import collections
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.fio.common import KiB, MiB, needs_fio

from iogate.fio.importer import import_jobfile, load_jobfile

pytestmark = needs_fio

JOBS = Path(__file__).parent / "jobs"
Z = 5.0  # standard errors a realized figure may stray from its expectation
FILE_SIZE = 32 * MiB
CHUNK = 512  # iogate's coverage chunk for regions up to 512 MiB (offsets.coverage_pct)
IOMETER_SPLIT = {512: 10, 1 * KiB: 5, 2 * KiB: 5, 4 * KiB: 60, 8 * KiB: 2, 16 * KiB: 4,
                 32 * KiB: 4, 64 * KiB: 10}


# -- running both tools -------------------------------------------------------------------

@pytest.fixture(scope="module")
def env(workdir: Path) -> dict[str, str]:
    """The environment both tools run the job files with: the data file they share
    (FILE_SIZE random bytes, on the disk) and a directory for the jobs that name their
    files."""
    data = workdir / "data"
    with open(data, "wb") as f:
        for _ in range(FILE_SIZE // MiB):
            f.write(os.urandom(MiB))
        f.flush()
        os.fsync(f.fileno())
    (workdir / "dir").mkdir()
    return {**os.environ, "SBS_FILE": str(data), "SBS_DIR": str(workdir / "dir"),
            "SBS_RUNTIME": "1"}


def run_fio(job: Path, env: dict[str, str], cwd: Path, *args: str) -> list[dict[str, Any]]:
    """fio's JSON jobs for the job file (each clone its own entry)."""
    out = cwd / f"{job.stem}.fio.json"
    subprocess.run(["fio", "--output-format=json", f"--output={out}", *args, str(job)],
                   env=env, cwd=cwd, check=True, capture_output=True, timeout=120)
    return json.loads(out.read_text())["jobs"]


def run_iogate(job: Path, env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    """The cases of iogate's results document for the job file, in the order they ran."""
    out = cwd / f"{job.stem}.iogate.json"
    proc = subprocess.run([sys.executable, "-m", "iogate", "run", str(job), "--json", str(out)],
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    cases = json.loads(out.read_text())["cases"]
    assert all(c["outcome"] == "passed" for c in cases), cases
    return cases


def fio_dir(job: dict[str, Any], name: str) -> tuple[int, int]:
    """(requests, bytes) of a fio job in a direction."""
    return job[name]["total_ios"], job[name]["io_bytes"]


def iogate_dir(case: dict[str, Any], name: str) -> tuple[int, int]:
    m = case["metrics"]
    return int(m[f"{name}.ios"]), int(m[f"{name}.bytes"])


def iogate_bs_counts(case: dict[str, Any], name: str) -> dict[int, int]:
    """Requests per size in a direction, from the realized block size shares."""
    m = case["metrics"]
    prefix = f"{name}.bs_pct."
    return {int(k[len(prefix):]): round(v * m[f"{name}.ios"] / 100) for k, v in m.items()
            if k.startswith(prefix)}


# -- tolerances ---------------------------------------------------------------------------

def assert_share(count: int, n: int, p: float, what: str) -> None:
    """count of n draws of probability p: within Z binomial standard errors."""
    sigma = math.sqrt(n * p * (1 - p))
    assert abs(count - n * p) <= Z * sigma + 0.5, \
        f"{what}: {count} of {n} ({100 * count / n:.2f}%), {100 * p:g}% asked, " \
        f"tolerance {Z * sigma:.1f}"


def assert_same_share(a: tuple[int, int], b: tuple[int, int], p: float, what: str) -> None:
    """Two engines' shares (count, n) of draws of probability p: consistent with each
    other, the difference within Z standard errors of a difference of two shares."""
    (ca, na), (cb, nb) = a, b
    sigma = math.sqrt(p * (1 - p) * (1 / na + 1 / nb))
    assert abs(ca / na - cb / nb) <= Z * sigma, \
        f"{what}: {ca / na:.4f} against {cb / nb:.4f}, tolerance {Z * sigma:.4f}"


def split_moments(split: dict[int, int]) -> tuple[float, float]:
    """Mean and variance of a request size under a split of percentages."""
    mean = sum(s * w for s, w in split.items()) / 100
    return mean, sum(w * (s - mean) ** 2 for s, w in split.items()) / 100


# -- the jobs -----------------------------------------------------------------------------

def test_mixed_job_issues_the_same_requests_in_the_same_mix(env, workdir):
    # fio's examples/fio-rand-RW.fio, small: 8 MiB of 4 KiB random requests, 60% reads.
    job = JOBS / "side-rwmix.fio"
    (theirs,) = run_fio(job, env, workdir)
    (mine,) = run_iogate(job, env, workdir)
    n = 8 * MiB // (4 * KiB)
    shares = {}
    for name, get, r in (("fio", fio_dir, theirs), ("iogate", iogate_dir, mine)):
        (reads, rbytes), (writes, wbytes) = get(r, "read"), get(r, "write")
        print(f"\n{name}: {reads} reads, {writes} writes ({100 * reads / n:.2f}% reads)")
        assert reads + writes == n, name
        assert rbytes + wbytes == 8 * MiB, name
        assert_share(reads, n, 0.6, f"{name} reads")
        shares[name] = (reads, n)
    assert_same_share(shares["fio"], shares["iogate"], 0.6, "read share, fio against iogate")


def test_block_size_split_gives_the_same_sizes_without_the_random_map(env, workdir):
    # fio's examples/iometer-file-access-server.fio with norandommap: 32 MiB of requests of
    # the split's sizes, 80% reads. Per size iogate's counts follow the split; fio reports
    # no counts per size, so its mean size per direction is held to the split's mean.
    job = JOBS / "side-iometer-norandommap.fio"
    (theirs,) = run_fio(job, env, workdir)
    (mine,) = run_iogate(job, env, workdir)
    mean, var = split_moments(IOMETER_SPLIT)
    means: dict[str, dict[str, tuple[float, int]]] = {}
    mix = {}
    for name, get, r in (("fio", fio_dir, theirs), ("iogate", iogate_dir, mine)):
        dirs = {d: get(r, d) for d in ("read", "write")}
        n = sum(ios for ios, _ in dirs.values())
        total = sum(b for _, b in dirs.values())
        print(f"\n{name}: " + ", ".join(f"{ios} {d}s of {b / ios:.0f} bytes on average"
                                        for d, (ios, b) in dirs.items())
              + f", {total} bytes in all")
        # Size-based with sizes drawn at random: the job ends with the request that reaches
        # its size, so the total is past it by less than the largest size.
        assert FILE_SIZE <= total < FILE_SIZE + max(IOMETER_SPLIT), name
        assert_share(dirs["read"][0], n, 0.8, f"{name} reads")
        mix[name] = (dirs["read"][0], n)
        means[name] = {}
        for d, (ios, b) in dirs.items():
            tolerance = Z * math.sqrt(var / ios)
            assert abs(b / ios - mean) <= tolerance, \
                f"{name} {d}: mean size {b / ios:.0f}, the split's {mean:.0f} +- {tolerance:.0f}"
            means[name][d] = (b / ios, ios)
    assert_same_share(mix["fio"], mix["iogate"], 0.8, "read share, fio against iogate")
    for d in ("read", "write"):
        (m1, n1), (m2, n2) = means["fio"][d], means["iogate"][d]
        assert abs(m1 - m2) <= Z * math.sqrt(var / n1 + var / n2), (d, m1, m2)
        counts = iogate_bs_counts(mine, d)
        n = iogate_dir(mine, d)[0]
        assert sum(counts.values()) == n
        assert sum(s * c for s, c in counts.items()) == iogate_dir(mine, d)[1]
        for size, pct in IOMETER_SPLIT.items():
            assert_share(counts.get(size, 0), n, pct / 100, f"iogate {d}s of {size} bytes")


def test_random_map_shortens_fios_requests_as_the_import_says(env, workdir):
    # The same job with fio's random map, as the example has it: fio covers the region
    # exactly once by cutting requests down to the untouched blocks left at each offset, so
    # its mean size falls far below the split's; iogate issues the split's sizes.
    job = JOBS / "side-iometer.fio"
    (theirs,) = run_fio(job, env, workdir)
    (mine,) = run_iogate(job, env, workdir)
    mean, var = split_moments(IOMETER_SPLIT)
    fio_ios = sum(fio_dir(theirs, d)[0] for d in ("read", "write"))
    mine_ios = sum(iogate_dir(mine, d)[0] for d in ("read", "write"))
    fio_mean = FILE_SIZE / fio_ios
    print(f"\nfio: {fio_ios} requests of {fio_mean:.0f} bytes on average; iogate: {mine_ios} "
          f"of {sum(iogate_dir(mine, d)[1] for d in ('read', 'write')) / mine_ios:.0f}; "
          f"the split's mean {mean:.0f}")
    assert sum(fio_dir(theirs, d)[1] for d in ("read", "write")) == FILE_SIZE
    assert mean - fio_mean > Z * math.sqrt(var / fio_ios)  # far more than noise
    for d in ("read", "write"):
        ios, b = iogate_dir(mine, d)
        assert abs(b / ios - mean) <= Z * math.sqrt(var / ios), d
    text = " ".join(line.lstrip("# ").strip() for line in import_jobfile(job).splitlines())
    assert "fio's random map shortens requests" in text
    assert "add norandommap to the fio job to compare them" in text


def _epoch_ms(path: Path) -> list[int]:
    return [int(line.split(",")[0]) for line in path.read_text().splitlines() if line.strip()]


def _offsets(path: Path, direction: str) -> list[int]:
    """Offsets of a direction's requests in an iolog (version 3) or a latency log with
    offsets."""
    out = []
    for line in path.read_text().splitlines():
        f = line.replace(",", " ").split()
        if len(f) == 5 and f[2] == direction:  # time, file, direction, offset, size
            out.append(int(f[3]))
        # time, latency, direction (0 read, 1 write), size, offset, prio
        elif len(f) == 6 and int(f[2]) == ("read", "write").index(direction):
            out.append(int(f[4]))
    return out


def test_stonewalled_phases_of_clones_issue_the_same_requests_in_order(env, workdir):
    # fio's examples/tiobench-example.fio, small: phases write, randwrite, read, randread,
    # separated by stonewalls, each of numjobs=4 clones on files of their own (1 MiB each).
    job = JOBS / "side-tiobench.fio"
    logs = workdir / "tiobench-lat"
    logs.mkdir()
    mine = run_iogate(job, env, workdir)  # first: iogate writes only files it created
    theirs = run_fio(job, env, workdir, f"--write_lat_log={logs}/lat", "--log_unix_epoch=1",
                     "--log_offset=1")
    phases = [("f1", "write"), ("f2", "write"), ("f3", "read"), ("f4", "read")]
    n = 1 * MiB // (4 * KiB)
    # fio: one entry per clone, the phases in order, each clone its own 256 requests
    assert [(j["jobname"], j["groupid"]) for j in theirs] == \
        [(p, g) for g, (p, _) in enumerate(phases) for _ in range(4)]
    # iogate: one case per clone, in the same order, the same counts
    assert [c["id"].split("::")[1] for c in mine] == \
        [f"{p}.{k}" for p, _ in phases for k in range(4)]
    for i, (r, case) in enumerate(zip(theirs, mine, strict=True)):
        direction = phases[i // 4][1]
        other = "read" if direction == "write" else "write"
        assert fio_dir(r, direction) == iogate_dir(case, direction) == (n, 1 * MiB), i
        assert fio_dir(r, other) == iogate_dir(case, other) == (0, 0), i
    # fio ran the phases in order: every completion of a phase (epoch milliseconds) is no
    # later than the first of the next.
    spans = []
    for g in range(4):
        times = [t for k in range(4) for t in _epoch_ms(logs / f"lat_clat.{4 * g + k + 1}.log")]
        spans.append((min(times), max(times)))
    print(f"\nfio phases (ms): {spans}")
    assert all(spans[g][1] <= spans[g + 1][0] for g in range(3)), spans
    # Random phases: both tools' random maps touch every block once
    for g in (1, 3):
        direction = phases[g][1]
        for k in range(4):
            offsets = _offsets(logs / f"lat_clat.{4 * g + k + 1}.log", direction)
            assert sorted(offsets) == [b * 4 * KiB for b in range(n)]
            assert mine[4 * g + k]["metrics"]["offsets.coverage_pct"] == 100, (g, k)


def _zipf_theory(blocks: int, draws: int, theta: float) -> tuple[list[float], float, float]:
    """Each rank's probability, and the mean and standard deviation of the number of
    distinct blocks `draws` independent draws touch (a sum of indicators; they are
    negatively correlated, so the deviation is an upper bound)."""
    w = [k ** -theta for k in range(1, blocks + 1)]
    total = sum(w)
    p = [x / total for x in w]
    mean = sum(1 - (1 - q) ** draws for q in p)
    var = sum((1 - q) ** draws * (1 - (1 - q) ** draws) for q in p)
    return p, mean, math.sqrt(var)


def test_zipf_draws_the_same_distribution_over_a_power_of_two_blocks(env, workdir):
    # fio's examples/zipf.fio, small: 65536 reads of 4 KiB over 4 MiB (1024 blocks),
    # zipf:1.2, norandommap. fio's offsets from its iolog; iogate's only offset measurement
    # is the share of the region touched (offsets.coverage_pct).
    job = JOBS / "side-zipf.fio"
    blocks, draws = 1024, 65536
    run_fio(job, env, workdir, f"--write_iolog={workdir}/zipf.iolog")
    (mine,) = run_iogate(job, env, workdir)
    p, mean, sd = _zipf_theory(blocks, draws, 1.2)
    counts = collections.Counter(o // (4 * KiB) for o in _offsets(workdir / "zipf.iolog",
                                                                   "read"))
    assert sum(counts.values()) == draws
    assert iogate_dir(mine, "read") == (draws, draws * 4 * KiB)
    iogate_touched = mine["metrics"]["offsets.coverage_pct"] * blocks / 100
    hottest = sorted(counts.values(), reverse=True)
    print(f"\ndistinct blocks: fio {len(counts)}, iogate {iogate_touched:.0f}, theory "
          f"{mean:.1f} +- {sd:.1f}; share of fio's reads in its hottest block "
          f"{100 * hottest[0] / draws:.2f}% (theory {100 * p[0]:.2f}%), 10 hottest "
          f"{100 * sum(hottest[:10]) / draws:.2f}% ({100 * sum(p[:10]):.2f}%), hottest 10% "
          f"{100 * sum(hottest[:blocks // 10]) / draws:.2f}% "
          f"({100 * sum(p[:blocks // 10]):.2f}%)")
    # Both touch as many distinct blocks as the distribution does.
    for name, touched in (("fio", len(counts)), ("iogate", iogate_touched)):
        assert abs(touched - mean) <= Z * sd, (name, touched, mean)
    # fio's hottest block takes zipf's share of the reads...
    assert_share(hottest[0], draws, p[0], "fio's hottest block")
    # ...but its approximation of zipf draws the next hottest ranks more often than zipf
    # does (iogate draws zipf exactly), as the import says: the 10 hottest blocks take more
    # than 3 standard errors above zipf's share.
    excess = sum(hottest[:10]) - draws * sum(p[:10])
    assert excess > 3 * math.sqrt(draws * sum(p[:10]) * (1 - sum(p[:10]))), excess
    text = " ".join(import_jobfile(job).split())
    assert "fio's zipf is an approximation that draws the ranks after the first two more " \
        "often" in text


def test_fios_zipf_leaves_blocks_out_as_the_import_says(env, workdir):
    # The same job over 1000 blocks (4000 KiB): fio's hash of the rank modulo the number of
    # blocks reaches 308 of them; iogate's permutation reaches all, as over 1024.
    job = workdir / "side-zipf-1000.fio"
    job.write_text((JOBS / "side-zipf.fio").read_text().replace("size=4m", "size=4000k"))
    run_fio(job, env, workdir, f"--write_iolog={workdir}/zipf-1000.iolog")
    (mine,) = run_iogate(job, env, workdir)
    _, mean, sd = _zipf_theory(1000, 65536, 1.2)
    fio_touched = len(set(_offsets(workdir / "zipf-1000.iolog", "read")))
    iogate_touched = mine["metrics"]["offsets.coverage_pct"] * 1000 / 100
    print(f"\ndistinct of 1000 blocks: fio {fio_touched}, iogate {iogate_touched:.0f}, theory "
          f"{mean:.1f} +- {sd:.1f}")
    assert fio_touched <= 308
    assert abs(iogate_touched - mean) <= Z * sd
    text = " ".join(import_jobfile(job).split())
    assert "fio maps each drawn rank to a block by a hash modulo the number of blocks" in text
    assert "of 1000 blocks it draws 308" in text


@pytest.mark.parametrize("job", ["side-rate.fio", "side-rate-clones.fio"])
def test_per_direction_rates_are_kept_per_direction(env, job):
    # Rates are timing, compared by bench/side_by_side.py; here only what the import keeps:
    # 600 reads and 200 writes a second in all, whether one job or two clones of 300 and 100.
    (case,) = load_jobfile(JOBS / job, env=env).cases
    assert case.workload.rw == "randrw"
    rate = case.workload.rate_iops
    assert (rate.read, rate.write) == (600, 200)
