"""Conformance over fio's own job files: every one whose engines iogate has either imports and
runs end to end, or is refused with the reason this file expects.

Two corpora, unchanged copies (fio's, GPL-2.0) of the files whose ``ioengine`` values are all
engines iogate has, or that name none (fio's default psync): fio's ``examples/`` folder in
``tests/fio/examples/`` and fio's own test jobs (``t/jobs/``) in ``tests/fio/testjobs/``.
For each, two tables say what each file does here: runs (imports; run with a small size and
runtime plus the overrides it needs on this machine, each with its reason) and refusals (the
import exits 2; the first problem names the expected reason). A file in neither table fails,
so the tables stay complete; the fio guide's tables of these counts are rendered from them and
checked.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest
from tests.e2e.test_cli import iogate

from iogate.cli import main

EXAMPLES = Path(__file__).resolve().parent / "examples"
TESTJOBS = Path(__file__).resolve().parent / "testjobs"
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "fio.md"

# The engines iogate has (fio's names); an example whose engines are all here is tested.
ENGINES = frozenset({"psync", "sync", "pvsync", "pvsync2", "vsync", "libaio", "io_uring", "null",
                     "mmap", "posixaio"})
FIO_DEFAULT_ENGINE = "psync"

# Every run is shrunk to this; fio's examples move gigabytes for minutes.
SMALL = ["size=16m", "runtime=1s"]
# A sparse file standing in for the device an example is written for ({dir}: the test's
# disk-backed directory); the test creates it, so the run is told it may write it.
DEVICE = "{dir}/device.data"
GiB = 1 << 30


class Run(NamedTuple):
    """An example that imports: the ``--set`` values it needs to run here ({dir} is the test's
    disk-backed directory), why, why it may end in exit 1 (None: it must pass), why it is only
    validated, not run (None: it runs), the size of the sparse DEVICE file it needs (0: none)
    and the environment variables it reads."""

    sets: tuple[str, ...] = ()
    why: str = ""
    may_fail: str | None = None
    not_run: str | None = None
    device: int = 0
    env: tuple[tuple[str, str], ...] = ()


class Refusal(NamedTuple):
    """An example the import refuses: a substring of its first problem, and the reason's group
    as the fio guide counts it."""

    says: str
    group: str


RUNS: dict[str, Run] = {
    "1mbs_clients.fio": Run(("startdelay=0", "filename={dir}/clients.data"),
                            "its 32 clients start 4s apart (124s); its directory=tmp must exist",
                            "ratemin=1024 becomes read.bw >= 1KiB/s in all of 1s, which 32 "
                            "clients at 1250 B/s may miss on a busy machine"),
    "aio-read.fio": Run(("filename={dir}/aio-read.data",), "directory=/data1 does not exist"),
    "backwards-read.fio": Run(),
    "cmdprio-percentage.fio": Run(("filename={dir}/prio.data",), "filename=/dev/sda, a device"),
    "basic-verify.fio": Run(("filename={dir}/verify.data",), "filename=/dev/XXX, a placeholder"),
    "cross-stripe-verify.fio": Run((f"filename={DEVICE}",),
                                   "its 30 clones write 124g apart on /dev/nvme0n1; a sparse "
                                   "file of that size, as laying out a new one would fill it",
                                   device=30 * 124 * GiB),
    "butterfly.fio": Run(("filename={dir}/butterfly.data",), "filename=/tmp/testfile, "
                         "outside the test"),
    "fio-rand-RW.fio": Run(),
    "fio-rand-read.fio": Run(),
    "fio-rand-write.fio": Run(),
    "fio-seq-RW.fio": Run(),
    "fio-seq-read.fio": Run(),
    "fio-seq-write.fio": Run(),
    "exitwhat.fio": Run(("filename={dir}/exitwhat.data",), "filename=/tmp/test, outside the "
                        "test"),
    "fixed-rate-submission.fio": Run(),
    "flow.fio": Run(("filename={dir}/flow.data",), "filename=/tmp/testfile, outside the test"),
    "fsx.fio": Run(),
    "iometer-file-access-server.fio": Run(),
    "jesd219.fio": Run(("filename={dir}/jesd219.data",), "filename=/dev/nvme0n1, a device"),
    "null.fio": Run(),
    "poisson-rate-submission.fio": Run(),
    "rand-zones.fio": Run(),
    "sequence-distribution.fio": Run(),
    "ssd-steadystate.fio": Run(("filename={dir}/ssd.data",), "filename=/dev/fioa, a device"),
    "ssd-test.fio": Run(("filename={dir}/ssd-test.data",),
                        "directory=/mount-point-of-ssd does not exist"),
    "surface-scan.fio": Run(why="fill_device writes until the filesystem is full; the run's "
                                "size=16m is the most it writes here"),
    "steadystate.fio": Run(not_run="its steady-state rounds last up to its runtime=5m, which "
                           "--set runtime does not shorten (fio's --runtime=1 does not either)"),
    "example_latency_steadystate.fio": Run(
        not_run="steady mean latency in rounds of 10s, a window of 30 (5m) after a 1m ramp, at "
                "most its runtime=1h, which --set runtime does not shorten"),
    "numa.fio": Run(("filename={dir}/numa.data", "numa_cpu_nodes=0",
                     "numa_mem_policy=interleave:0"),
                    "filename=/dev/sdb1, a device; its job2 places threads and memory on NUMA "
                    "nodes 0-1, and node 0 is the one every machine has"),
    "tiobench-example.fio": Run(),
    "xnvme-compare.fio": Run((f"filename={DEVICE}",),
                             "allow_file_create=0 on the --filename its usage names; its "
                             "[override] section reads FIO_RW, FIO_IODEPTH and FIO_BS",
                             device=16 << 20,
                             env=(("FIO_RW", "randread"), ("FIO_IODEPTH", "1"), ("FIO_BS", "4k"))),
    "waitfor.fio": Run(("filename={dir}/waitfor.data",), "filename=/tmp/data, outside the test"),
    "zipf.fio": Run(),
}

ZONED = "zoned block devices (`zonemode`)"
NEWER = ("options newer than fio 3.33 (`sprandom`, `fdp`, `md_per_io_size`, `cmdprio_bssplit` "
         "hints)")
DEDUPE = "fio's dedupe working set (`dedupe_mode`)"
ERRORS = "carrying on past the I/O errors it expects (`ignore_error`)"
SEARCH = "fio's search for a queue depth (`latency_target`)"

REFUSED: dict[str, Refusal] = {
    "atomic-verify.fio": Refusal("atomic=1", "atomic writes (`atomic`)"),
    "cmdprio-bssplit.fio": Refusal("newer than fio 3.33", NEWER),
    "dedupe-global.fio": Refusal("dedupe_mode", DEDUPE),
    "disk-zone-profile.fio": Refusal("zonemode", ZONED),
    "enospc-pressure.fio": Refusal("ignore_error", ERRORS),
    "latency-profile.fio": Refusal("latency_target", SEARCH),
    "sprandom.fio": Refusal("unknown fio option 'sprandom'", NEWER),
    "xnvme-fdp.fio": Refusal("unknown fio option 'fdp'", NEWER),
    "xnvme-pi.fio": Refusal("unknown fio option 'md_per_io_size'", NEWER),
    "xnvme-zoned.fio": Refusal("zonemode", ZONED),
    "zbd-rand-write-trim-gc.fio": Refusal("zonemode", ZONED),
    "zbd-rand-write-zone-reset-gc.fio": Refusal("zonemode", ZONED),
    "zbd-rand-write.fio": Refusal("zonemode", ZONED),
    "zbd-seq-read.fio": Refusal("zonemode", ZONED),
}

# fio's test jobs: each exercises one option or a bug once fixed; they write small files named
# in the job (relative: in the test's directory).
TESTJOB_RUNS: dict[str, Run] = {name: Run() for name in (
    "t0001-52c58027.fio", "t0002-13af05ae-pre.fio", "t0003-0ae2c6e1-pre.fio",
    "t0004-8a99fdf6.fio", "t0005-f7078f7b.fio", "t0006-82af2a7c.fio", "t0008-ae2fafc8.fio",
    "t0010-b7aae4ba.fio", "t0011-5d2788d5.fio",
    "t0012.fio", "t0013.fio", "t0014.fio", "t0015-4e7e7898.fio", "t0016-d54ae22.fio", "t0017.fio",
    "t0018.fio", "t0019.fio", "t0020.fio", "t0021.fio", "t0022.fio", "t0023.fio", "t0024.fio",
    "t0025.fio", "t0026.fio", "t0028-c6cade16.fio",
    "t0029.fio", "t0030.fio", "t0032-43063a1c.fio", "t0033.fio", "t0034.fio",
    "t0036-pre.fio", "t0037-pre.fio")}

READ_VERIFY = "verifying reads of blocks another job wrote (`verify` with `rw=read`)"
IOLOGS = "I/O logs recorded or replayed (`write_iolog`, `read_iolog`)"
TESTJOB_REFUSED: dict[str, Refusal] = {
    "t0002-13af05ae-post.fio": Refusal("randwrite, rw or randrw, not read", READ_VERIFY),
    "t0003-0ae2c6e1-post.fio": Refusal("randwrite, rw or randrw, not read", READ_VERIFY),
    "t0007-37cf9e3c.fio": Refusal("write_iolog", IOLOGS),
    "t0009-f8b0bd10.fio": Refusal("verify needs a file; the null engine writes nothing",
                                  "verifying with the null engine, which writes nothing"),
    "t0027.fio": Refusal("a pattern read from a file", "patterns read from a file "
                         "(`buffer_pattern='file'`)"),
    "t0031-pre.fio": Refusal("write_iolog", IOLOGS),
    "t0031.fio": Refusal("read_iolog", IOLOGS),
    "t0036-post.fio": Refusal("verify_state_load", "verifying what an earlier run wrote "
                              "(`verify_state_load`)"),
    "t0037-post.fio": Refusal("verify_state_load", "verifying what an earlier run wrote "
                              "(`verify_state_load`)"),
    "t0038-397f1338.fio": Refusal("read_iolog", IOLOGS),
}


class Corpus(NamedTuple):
    """A folder of fio's job files, what its files do here, and its fio guide table's title."""

    title: str
    folder: Path
    runs: dict[str, Run]
    refused: dict[str, Refusal]

    def names(self) -> list[str]:
        return sorted(p.name for p in self.folder.glob("*.fio"))


CORPORA = {
    "examples": Corpus("fio's examples with an engine iogate has", EXAMPLES, RUNS, REFUSED),
    "testjobs": Corpus("fio's test jobs (`t/jobs`) with an engine iogate has", TESTJOBS,
                       TESTJOB_RUNS, TESTJOB_REFUSED),
}


def engines(path: Path) -> set[str]:
    """The ioengine values a job file names (fio's default when none), read from its text."""
    found = set()
    for line in path.read_text().splitlines():
        m = re.match(r"\s*ioengine\s*=\s*([^\s;#]+)", line)
        if m:
            found.add(m.group(1))
    return found or {FIO_DEFAULT_ENGINE}


def guide_table(corpus: Corpus) -> str:
    """The fio guide's table of a corpus' counts, from its two tables."""
    groups = Counter(r.group for r in corpus.refused.values())
    validated = sum(1 for r in corpus.runs.values() if r.not_run)
    rows = [f"| import and run | {len(corpus.runs) - validated} |",
            f"| import; validated only, not run here | {validated} |",
            f"| refused | {len(corpus.refused)} |",
            *(f"| refused: {group} | {n} |" for group, n in sorted(
                groups.items(), key=lambda item: (-item[1], item[0])))]
    total = len(corpus.runs) + len(corpus.refused)
    return "\n".join([f"| {corpus.title} ({total}) | files |", "|---|---:|", *rows])


@pytest.mark.parametrize("corpus", CORPORA.values(), ids=CORPORA.keys())
def test_the_tables_cover_exactly_the_files(corpus: Corpus) -> None:
    names = corpus.names()
    assert names, f"no job files in {corpus.folder}"
    foreign = {n: sorted(engines(corpus.folder / n) - ENGINES) for n in names
               if not engines(corpus.folder / n) <= ENGINES}
    assert not foreign, f"job files with an engine iogate does not have: {foreign}"
    assert not set(corpus.runs) & set(corpus.refused)
    assert sorted({*corpus.runs, *corpus.refused}) == names, \
        "the runs and refusals must name every file"


@pytest.mark.parametrize("corpus", CORPORA.values(), ids=CORPORA.keys())
def test_the_guide_counts_come_from_the_tables(corpus: Corpus) -> None:
    assert guide_table(corpus) in GUIDE.read_text(), \
        f"docs/guides/fio.md must carry this table:\n{guide_table(corpus)}"


@pytest.mark.parametrize(("corpus", "name"), [(c, n) for c in CORPORA.values() for n in c.names()],
                         ids=[f"{k}/{n}" for k, c in CORPORA.items() for n in c.names()])
def test_a_job_file_imports_and_runs_or_is_refused_as_expected(
        corpus: Corpus, name: str, disk_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus.folder / name
    # The import is the command in this process (its own tests run it as a process); the run
    # below is a process of its own, as a user starts it.
    monkeypatch.chdir(disk_dir)
    code = main(["import", str(path), "-o", str(disk_dir / "imported.yaml")])
    said = capsys.readouterr().err
    if name in corpus.refused:
        refusal = corpus.refused[name]
        assert code == 2, said
        first = said.splitlines()[0]
        assert first.startswith(f"{path}:"), first  # located at the file and line
        assert refusal.says in first, said
        return
    if name not in corpus.runs:
        pytest.fail(f"{name} is in neither table: run `iogate import` on it and add it to the "
                    "one that says what it does")
    assert code == 0, said
    run = corpus.runs[name]
    if run.not_run:
        assert main(["validate", str(path)]) == 0, capsys.readouterr()
        return
    args = [a for s in (*SMALL, *run.sets) for a in ("--set", s.format(dir=disk_dir))]
    if run.device:
        device = DEVICE.format(dir=disk_dir)
        with open(device, "wb") as f:
            os.truncate(f.fileno(), run.device)
        args += ["--allow-overwrite", device]
    proc = iogate("run", str(path), *args, "--json", str(disk_dir / "results.json"),
                  cwd=disk_dir, env={"IOGATE_TMPDIR": str(disk_dir), **dict(run.env)})
    allowed = {0, 1} if run.may_fail else {0}
    assert proc.returncode in allowed, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    cases = json.loads((disk_dir / "results.json").read_text())["cases"]
    assert cases
    assert {c["id"]: c["outcome"] for c in cases if c["outcome"] not in ("passed", "failed")} \
        == {}, proc.stdout + proc.stderr
