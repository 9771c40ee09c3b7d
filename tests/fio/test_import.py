"""fio job files to suites: the field notes' job files and one per feature, imported, loaded,
lowered and compared with what fio would run; bad job files give located errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iogate.cli import main
from iogate.engine import catalog
from iogate.errors import SuiteError
from iogate.fio.importer import import_jobfile, is_jobfile, load_jobfile
from iogate.fio.jobfile import ValueProblem, fio_pattern, fio_size
from iogate.fio.options import forbidden, job_options, render_jobfile
from iogate.job import PPM, BsEntry, JobSpec, Zone
from iogate.lower import lower
from iogate.plan import plan
from iogate.spec import LoadedSuite, load_suite_text
from iogate.spec.variables import BUILTINS

JOBS = Path(__file__).parent / "jobs"
FIO = shutil.which("fio")
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
S, MS, US = 10**9, 10**6, 10**3


def imported(name: str, env: dict[str, str] | None = None) -> LoadedSuite:
    """The job file imported to text, and that text loaded as any suite is."""
    text = import_jobfile(JOBS / name)
    return load_suite_text(text, JOBS / name, env if env is not None else {})


def specs(name: str, env: dict[str, str] | None = None) -> dict[str, JobSpec]:
    suite = imported(name, env)
    return {c.id: lower(c.workload, filenames=c.workload.filenames or ["/var/tmp/x"], seed=1)
            for c in suite.cases}


def problems_of(name: str) -> list[str]:
    with pytest.raises(SuiteError) as info:
        import_jobfile(JOBS / name)
    return [str(p) for p in info.value.problems]


# -- the field notes ----------------------------------------------------------------------

def test_iops_job_from_the_mailing_list() -> None:
    suite = imported("iops.job")
    assert [c.id for c in suite.cases] == ["zufalligschreiben", "sequentiellschreiben",
                                           "zufalliglesen", "sequentielllesen"]
    s = specs("iops.job")
    for spec in s.values():
        # bsrange=2-16k: every multiple of 2 bytes up to 16 KiB, as fio issues them.
        assert (spec.engine, spec.size, spec.filename, spec.iodepth, spec.numjobs) == (
            "psync", 2 * GiB, "iops1", 1, 1)
        assert spec.bssplit_read == spec.bssplit_write == [BsEntry(2, 16 * KiB, PPM)]
    assert (s["zufalligschreiben"].rw, s["zufalligschreiben"].refill) == ("randwrite", True)
    assert (s["sequentiellschreiben"].rw, s["sequentiellschreiben"].refill) == ("write", True)
    # The last two jobs have no stonewall between them: fio runs them together (group 2 in
    # the mail's output), the first two each alone.
    units = plan(suite.cases)
    assert [[c.id for c in u] for u in units] == [
        ["zufalligschreiben"], ["sequentiellschreiben"], ["zufalliglesen", "sequentielllesen"]]


def test_threads_case_keeps_fio_queue_depth_of_a_sync_engine() -> None:
    spec = specs("threads-sync.fio")["randwrite-threads"]
    # fio's sync engine has one request in flight per job whatever iodepth says.
    assert (spec.engine, spec.iodepth, spec.numjobs, spec.bs_write, spec.direct) == (
        "sync", 1, 8, 8 * KiB, True)
    assert (spec.size, spec.runtime_ns, spec.time_based, spec.filename) == (
        1800 * MiB, 60 * S, True, "/a/file1")
    assert "one request in flight" in import_jobfile(JOBS / "threads-sync.fio")


def test_aio_case() -> None:
    spec = specs("aio-libaio.fio")["randwrite-aio"]
    assert (spec.engine, spec.iodepth, spec.numjobs, spec.rw) == ("libaio", 8, 1, "randwrite")


def test_one_job_over_eight_devices_shares_its_queue() -> None:
    suite = imported("one-job-eight-devices.fio")
    (case,) = suite.cases
    assert case.id == "random-read"  # fio's name= renames the job
    spec = lower(case.workload, filenames=case.workload.filenames, seed=1)
    assert spec.filenames == ["/dev/sdb", "/dev/sda", "/dev/sdd", "/dev/sde", "/dev/sdf",
                              "/dev/sdg", "/dev/sdh", "/dev/sdi"]
    # filesize=6G is per file; iogate's size is the total over the files.
    assert (spec.size, spec.iodepth, spec.rw) == (8 * 6 * GiB, 128, "randread")
    assert case.workload.randrepeat is False


def test_one_job_per_device_runs_them_together() -> None:
    suite = imported("one-job-per-device.fio")
    assert [c.id for c in suite.cases] == ["raw-random-read"] + [
        f"raw-random-read-{i}" for i in range(2, 9)]
    assert len(plan(suite.cases)) == 1  # no stonewall: one group, as fio runs them
    devices = ["/dev/sdb", "/dev/sda", "/dev/sdd", "/dev/sde", "/dev/sdf", "/dev/sdg",
               "/dev/sdh", "/dev/sdi"]
    assert [c.workload.filename for c in suite.cases] == devices
    assert {(c.workload.size, c.workload.iodepth) for c in suite.cases} == {(2 * GiB, 16)}
    text = import_jobfile(JOBS / "one-job-per-device.fio")
    assert "renamed" in text
    assert "group_reporting (line 8)" in text


def test_compressible_data() -> None:
    spec = specs("compressible.fio")["compressible"]
    assert (spec.compress_pct, spec.pattern, spec.refill, spec.rw) == (
        50, b"\xde\xad\xbe\xef", True, "write")


def test_rate_iops_keeps_fio_meaning_per_direction() -> None:
    s = specs("rate-iops-mix.fio")
    assert (s["per-direction"].rate_iops_read, s["per-direction"].rate_iops_write) == (70, 30)
    # fio's single value limits each direction; iogate's would be a total split 70/30.
    assert (s["single-value"].rate_iops_read, s["single-value"].rate_iops_write) == (100, 100)
    assert "limits each direction" in import_jobfile(JOBS / "rate-iops-mix.fio")


@pytest.mark.parametrize(("name", "expected"), [
    ("windows-drive-letter.fio", [(12, "'F:fiofile' is a Windows path")]),
    ("windows-two-drives.fio", [(13, "'F:fiofile' is a Windows path"),
                                (16, "'G:fiofile' is a Windows path")]),
    ("windows-physical-drive.fio", [(3, "windowsaio is fio's Windows engine"),
                                    (12, "'\\\\.\\PhysicalDrive10' is a Windows path")]),
])
def test_windows_job_files_are_refused_clearly(name: str, expected: list[tuple[int, str]]
                                               ) -> None:
    found = problems_of(name)
    assert len(found) == len(expected), found
    for (line, text), problem in zip(expected, found, strict=True):
        assert problem.startswith(f"{JOBS / name}:{line}:")
        assert text in problem


def test_a_file_named_with_a_colon_is_written_explicitly(tmp_path: Path) -> None:
    job = tmp_path / "colon.fio"
    job.write_text("[j]\nsize=1m\nfilename=./F\\:fiofile\n")
    (case,) = load_jobfile(job).cases
    assert case.workload.filename == "./F:fiofile"


# -- one file per feature -----------------------------------------------------------------

def test_every_option() -> None:
    s = specs("every-option.fio")
    mixed = s["mixed"]
    assert mixed.filenames == ["/var/tmp/iogate-fio-a", "/var/tmp/iogate-fio-b"]
    assert (mixed.engine, mixed.rw, mixed.rwmixread, mixed.bs_read, mixed.bs_write) == (
        "libaio", "randrw", 70, 4 * KiB, 64 * KiB)
    assert (mixed.blockalign_read, mixed.blockalign_write, mixed.iodepth, mixed.numjobs) == (
        4 * KiB, 4 * KiB, 16, 2)
    assert (mixed.size, mixed.offset, mixed.runtime_ns, mixed.ramp_ns, mixed.time_based,
            mixed.direct) == (64 * MiB, MiB, 2 * S, 500 * MS, True, True)
    # rate=10m,5m is per fio clone: two clones.
    assert (mixed.rate_bytes_read, mixed.rate_bytes_write, mixed.rate_process) == (
        20 * MiB, 10 * MiB, "poisson")
    assert (mixed.dist, mixed.dist_param, mixed.seed) == ("zipf", 1.2, 42)
    assert (mixed.thinktime_ns, mixed.thinktime_blocks, mixed.sync_kind, mixed.sync_every) == (
        100 * US, 4, "fdatasync", 16)
    assert (mixed.invalidate, mixed.compress_pct, mixed.compress_chunk, mixed.pattern,
            mixed.dedupe_pct) == (False, 40, KiB, b"abc", 10)

    ranges = s["ranges"]
    assert ranges.bssplit_read == [BsEntry(4 * KiB, 16 * KiB, PPM)]
    assert ranges.bssplit_write == [BsEntry(8 * KiB, 64 * KiB, PPM)]
    assert ranges.zones == [Zone(600_000, 100_000), Zone(300_000, 200_000),
                            Zone(100_000, 700_000)]
    split = s["split"]
    assert split.bssplit_read == [BsEntry(4 * KiB, 4 * KiB, PPM // 2),
                                  BsEntry(16 * KiB, 16 * KiB, PPM // 2)]
    assert (split.bs_write, split.bssplit_write) == (8 * KiB, [])
    assert (split.rate_iops_read, split.rate_iops_write) == (100, 50)
    verified = s["verified"]
    assert (verified.verify, verified.verify_backlog, verified.verify_fatal) == (
        "crc32c", 64, True)
    zeros = s["zeros"]
    assert (zeros.zero_buffers, zeros.sync_kind, zeros.sync_every, zeros.runtime_ns) == (
        True, "fsync", 8, 60 * S)
    dist = s["distribution"]
    assert (dist.dist, dist.dist_param, dist.direct, dist.rate_bytes_read) == (
        "pareto", 0.3, True, MiB)
    assert (s["normal"].engine, s["normal"].dist, s["normal"].dist_param) == (
        "null", "normal", 10.0)
    suite = imported("every-option.fio")
    assert suite.description == "Every translated option"
    assert len(plan(suite.cases)) == 1


def test_fio_units_are_kept_exactly() -> None:
    s = specs("kb-base.fio")
    # fio: 'KiB' is 1000 with the default kb_base, and rate_iops=2k is 2048.
    assert (s["si-looking"].bs_write, s["si-looking"].size, s["si-looking"].rate_iops_write) \
        == (4000, 64 * 10**6, 2048)
    assert (s["kb1000"].bs_write, s["kb1000"].size) == (4000, 64 * MiB)


def test_stonewall_and_wait_for_become_the_order_of_groups() -> None:
    suite = imported("groups.fio")
    assert [[c.id for c in u] for u in plan(suite.cases)] == [
        ["first", "second"], ["third"], ["fourth", "fifth"], ["sixth"]]


def test_a_second_global_section_applies_to_the_jobs_after_it() -> None:
    s = specs("global-twice.fio")
    assert (s["before"].rw, s["before"].bs_read) == ("read", 4 * KiB)
    assert (s["after"].rw, s["after"].bs_write) == ("write", 64 * KiB)
    assert (s["own-bs"].rw, s["own-bs"].bs_write) == ("write", 8 * KiB)


def test_arithmetic_is_evaluated_as_fio_does() -> None:
    spec = specs("expressions.fio")["calc"]
    assert (spec.size, spec.bs_read, spec.iodepth, spec.runtime_ns) == (64 * MiB, 8 * KiB, 8,
                                                                         2 * S)


def test_variables_stay_references_read_when_the_suite_loads() -> None:
    text = import_jobfile(JOBS / "env-vars.fio")  # QD and SIZE need not be set to import
    assert '"${QD}"' in text
    assert '"${SIZE}"' in text
    assert '"${ncpus}"' in text
    s = specs("env-vars.fio", env={"SIZE": "1m", "QD": "4"})
    ncpus, mb_memory, pagesize = (BUILTINS[k]() for k in ("ncpus", "mb_memory", "pagesize"))
    assert (s["reader"].size, s["reader"].iodepth, s["reader"].numjobs,
            s["reader"].bs_read) == (MiB, 4, ncpus, pagesize)
    assert mb_memory is not None
    assert s["memory"].size == 8 * mb_memory  # fio's size=8*$mb_memory: a number of bytes
    # Running needs them: an unset variable is an error at its fio line.
    with pytest.raises(SuiteError) as info:
        load_jobfile(JOBS / "env-vars.fio", env={"SIZE": "1m"})
    assert [str(p) for p in info.value.problems] == [
        f"{JOBS / 'env-vars.fio'}:9:1: [reader] iodepth: variable 'QD' is not set; set it "
        "or write ${QD:-default}"]


GOOD = ["iops.job", "threads-sync.fio", "aio-libaio.fio", "one-job-eight-devices.fio",
        "one-job-per-device.fio", "compressible.fio", "rate-iops-mix.fio", "every-option.fio",
        "kb-base.fio", "groups.fio", "global-twice.fio", "expressions.fio", "env-vars.fio",
        "null-quick.fio"]


@pytest.mark.parametrize("name", GOOD)
def test_imported_suites_validate_with_the_cli(name: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIZE", "1m")
    monkeypatch.setenv("QD", "2")
    out = tmp_path / "imported.suite.yaml"
    assert main(["import", str(JOBS / name), "-o", str(out)]) == 0
    assert out.read_text().startswith("# Imported from the fio job file")
    assert main(["validate", str(out)]) == 0
    assert main(["validate", str(JOBS / name)]) == 0  # the job file directly, same path
    captured = capsys.readouterr()
    assert f"{out}: ok" in captured.out
    assert f"{JOBS / name}: ok" in captured.out


# fio built without its expression parser (Debian's) cannot read the arithmetic file.
@pytest.mark.skipif(FIO is None, reason="fio is not installed")
@pytest.mark.parametrize("name", [n for n in GOOD if n != "expressions.fio"]
                         + ["windows-drive-letter.fio", "windows-two-drives.fio"])
def test_the_corpus_is_made_of_real_fio_job_files(name: str) -> None:
    result = subprocess.run([FIO or "fio", "--parse-only", str(JOBS / name)],
                            capture_output=True, text=True, timeout=30,
                            env={**os.environ, "SIZE": "1m", "QD": "2"})
    assert result.returncode == 0, result.stderr


# -- conversions, one at a time ----------------------------------------------------------

def one(body: str, env: dict[str, str] | None = None) -> tuple[JobSpec, str]:
    text = import_jobfile("one.fio", "[j]\nsize=1m\n" + body)
    (case,) = load_suite_text(text, "one.fio", env or {}).cases
    return lower(case.workload, filenames=case.workload.filenames or ["/var/tmp/x"],
                 seed=1), text


@pytest.mark.parametrize(("body", "field", "value", "comment"), [
    # fio sets both mixes from either: the one read last wins.
    ("rw=randrw\nrwmixwrite=20\nrwmixread=60\n", "rwmixread", 60, ""),
    ("rw=randrw\nrwmixread=60\nrwmixwrite=20\n", "rwmixread", 80, "rwmixwrite=20"),
    ("rw=read\nrwmixread=60\n", "rwmixread", 100, "fio ignores it for rw=read"),
    # bssplit wins over bs; a direction it leaves empty takes bs.
    ("rw=rw\nbs=16k\nbssplit=4k/50:8k/50,\n", "bs_write", 16384, "fio uses bssplit"),
    # fio issues multiples of the minimum up to the largest one below the maximum.
    ("bsrange=4k-10k\n", "bssplit_read", [BsEntry(4096, 8192, PPM)], "up to 8KiB"),
    ("bsrange=16k-4k\n", "bssplit_read", [BsEntry(4096, 16384, PPM)], ""),
    ("bsrange=4k:4k\n", "bs_read", 4096, ""),
    ("ioengine=libaio\niodepth=1k\n", "iodepth", 1024, ""),
    ("ioengine=pvsync\niodepth=16\n", "iodepth", 1, "one request in flight"),
    ("direct=1\nbuffered=1\n", "direct", False, "fio uses buffered"),
    ("buffered=0\ndirect=0\n", "direct", False, "fio uses direct"),
    ("time_based\n", "time_based", False, "no runtime: fio ignores it"),
    ("runtime=0\ntime_based\n", "runtime_ns", 0, "0 is fio's default: no limit"),
    ("thinktime=0\nthinktime_blocks=4\n", "thinktime_ns", 0, "no thinktime"),
    ("rw=write\nbuffer_compress_percentage=50\nbuffer_compress_chunk=0\nbs=8k\n",
     "compress_chunk", 8192, "one chunk per block"),
    ("rw=read\nrefill_buffers\nbuffer_pattern=0xab\n", "refill", False, "never writes"),
    ("rw=read\nfsync=4\n", "sync_every", 0, "fio never syncs"),
    ("rw=write\nfsync=0\n", "sync_every", 0, "no syncs"),
    ("rw=write\n", "refill", False, "scramble_buffers"),
    ("rw=read\nrate=,1m\n", "rate_bytes_read", 0, "no limit for the directions"),
    ("rw=randwrite\nrate_iops=5,7\nnumjobs=3\n", "rate_iops_write", 21, "per clone"),
    ("rw=write\nbuffer_pattern=\"0xab\"\n", "pattern", b"0xab", ""),
    ("directory=/var/tmp/d\nfilename=a:b\n", "filenames", ["/var/tmp/d/a", "/var/tmp/d/b"],
     "joined"),
    ("directory=/var/tmp/d\n", "filename", "/var/tmp/d/j.0.0", "fio's file name"),
    ("filename=/var/tmp/a:/var/tmp/b\nfilesize=2m\nsize=1g\nruntime=1\ntime_based\n",
     "size", 4 * MiB, "time_based runs past it"),
    ("verify=xxhash\nrw=write\n", "verify", "xxh32", "XXH32"),
    ("verify=0\nverify_fatal=1\nrw=write\n", "verify", "none", "no verify"),
    ("randseed=9\nrandrepeat=0\nrw=randread\n", "seed", 9, "fio ignores randrepeat"),
])
def test_conversion(body: str, field: str, value: object, comment: str) -> None:
    spec, text = one(body)
    assert getattr(spec, field) == value
    assert comment in text


def engine_of(name: str) -> catalog.Engine:
    engine = catalog.get(name)
    assert engine is not None, name
    return engine


@pytest.mark.parametrize("engine", catalog.names())
def test_every_engine_of_the_catalog_imports_and_exports_by_its_name(engine: str) -> None:
    # fio names its engines as iogate does: the catalog is the only list of them.
    spec, text = one(f"ioengine={engine}\nfilename=/var/tmp/iogate-engine\n")
    assert spec.engine == engine
    assert "fio's default ioengine" not in text
    opts = job_options(spec)
    assert ("ioengine", engine) in opts
    assert forbidden("ioengine", engine) is None
    assert f"\nioengine={engine}\n" in render_jobfile([("job", opts)])


@pytest.mark.parametrize("engine", [e.name for e in catalog.engines() if not e.queued])
def test_a_synchronous_engine_keeps_one_request_in_flight(engine: str) -> None:
    spec, text = one(f"ioengine={engine}\niodepth=8\n")
    assert spec.engine == engine
    assert spec.iodepth == 1
    assert f"fio's {engine} is synchronous: one request in flight" in text


def test_global_name_and_later_descriptions_are_noted() -> None:
    text = import_jobfile("n.fio", "[global]\nname=x\ndescription=first\ndescription=two\n"
                                   "[j]\nsize=1m\ndescription=mine\n")
    assert "description: first" in text
    assert "name=x (line 2, [global])" in text
    assert "description=two (line 4" in text
    assert "# mine" in text


# -- bad job files ------------------------------------------------------------------------

BAD = {
    # The size before the section belongs to no job: the job has none.
    "bad-no-section.fio": [(2, "option 'size' comes before any [section]")],
    "bad-unterminated.fio": [(3, "'[job' is not a section header")],
    "bad-unknown-option.fio": [(3, "unknown fio option 'blocksizee'; did you mean 'blocksize'"),
                               (4, "unknown fio option 'BS'; did you mean 'bs'"),
                               (6, "'not an option here' is not an option")],
    "bad-include.fio": [(3, "include common.fio: cannot read: No such file")],
    "bad-exec.fio": [(3, "exec_prerun is not supported: it runs a shell command"),
                     (6, "exec_postrun is not supported: it runs a shell command")],
    "bad-engines.fio": [(5, "the exec engine runs a program"),
                        (7, "an external engine loads a shared library"),
                        (9, "ioengine 'net' is not supported"),
                        (11, "ioengine 'rdma' is not supported")],
    "bad-values.fio": [(4, "fio stops reading '4 k' at the blank"),
                       (6, "fio reads no fractions"),
                       (8, "unknown rw 'randred'; did you mean 'randread'"),
                       (10, "fio needs a value: direct=1 or direct=0"),
                       (12, "fio takes 0 or 1 for direct, not 2"),
                       (15, "verify 'sha3-256' is not supported"),
                       (17, "fio's ':N' of a random mode issues N"),
                       (19, "unknown time unit 'x'"),
                       (21, "'20%' is a percentage"),
                       (24, "fio limits only the writes of this mixed job"),
                       (27, "puts each block's offset in the pattern"),
                       (29, "with a minimum that is not a power of two")],
    "bad-unsupported.fio": [(4, "iogate's random workloads draw every offset"),
                            (6, "gtod_cpu is not supported"),
                            (15, "hipri_percentage is not supported: an option of fio's"),
                            (17, "steadystate needs ss_dur of at least two check intervals (2s)"),
                            (19, "a range of delays")],
    "bad-wait-for.fio": [(5, "no job named 'b' comes before this one"),
                         (8, "no job named 'nobody'"),
                         (10, "fio starts 'd' when 'b' ends, while 'a', 'c' may still run")],
    "bad-global-only.fio": [(0, "no job section")],
    "bad-iogate-rules.fio": [(6, "direct I/O needs block sizes that are a multiple of 512"),
                             (8, "must be at most 1024, got 2000"),
                             (11, "verify checks the blocks a job writes")],
    "bad-variable.fio": [(2, "'${}' is not an environment variable reference"),
                         (4, "fio reads direct from the environment when it reads the file: "
                             "variable 'DIRECT' is not set: set it")],
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_job_files_name_file_line_and_option(name: str) -> None:
    found = problems_of(name)
    expected = BAD[name]
    assert len(found) == len(expected), "\n".join(found)
    for (line, text), problem in zip(expected, found, strict=True):
        where = f"{JOBS / name}:{line}:1: " if line else f"{JOBS / name}: "
        assert problem.startswith(where), problem
        assert text in problem, problem


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_job_files_exit_2_without_a_traceback(name: str, capsys: pytest.CaptureFixture[str]
                                                  ) -> None:
    assert main(["import", str(JOBS / name)]) == 2
    assert main(["run", str(JOBS / name)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.count(f"{JOBS / name}") >= 2 * len(BAD[name])


def test_problems_name_the_option_and_section() -> None:
    (problem,) = [p for p in problems_of("bad-engines.fio") if ":9:" in p]
    assert f"{JOBS / 'bad-engines.fio'}:9:1: [net] ioengine=net: " in problem


# -- the command line ---------------------------------------------------------------------

def test_import_writes_stdout_or_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    assert main(["import", str(JOBS / "iops.job")]) == 0
    text = capsys.readouterr().out
    assert text == import_jobfile(JOBS / "iops.job")
    assert "suite: iops\n" in text
    assert "iops.job" in text.splitlines()[0]
    job = tmp_path / "self.fio"
    job.write_text("[j]\nsize=1m\n")
    assert main(["import", str(job), "-o", str(job)]) == 2  # never over its own input
    assert job.read_text() == "[j]\nsize=1m\n"


def test_job_files_are_told_from_suites(tmp_path: Path) -> None:
    job = tmp_path / "iops.job"
    job.write_text("; a job\n\n[j]\nsize=1m\n")
    suite = tmp_path / "s.suite.yaml"
    suite.write_text("# a suite\nsuite: s\nworkloads: [{name: w, size: 1m, rw: read}]\n")
    assert is_jobfile(JOBS / "bad-values.fio")
    assert is_jobfile(job)
    assert not is_jobfile(suite)
    assert not is_jobfile(tmp_path / "missing.yaml")


def test_run_a_job_file_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    result = subprocess.run([sys.executable, "-m", "iogate", "run", str(JOBS / "null-quick.fio"),
                             "--json", str(out)], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text())
    cases = {c["id"]: c for c in document["cases"]}
    assert set(cases) == {"null-quick.fio::reads", "null-quick.fio::writes",
                          "null-quick.fio::later"}
    assert {c["outcome"] for c in cases.values()} == {"passed"}
    assert cases["null-quick.fio::reads"]["metrics"]["read.ios"] > 0
    assert cases["null-quick.fio::writes"]["metrics"]["write.ios"] > 0
    assert cases["null-quick.fio::writes"]["workload"]["bs"] == {"read": 8192, "write": 8192}


# -- generated job files ------------------------------------------------------------------

VALUES = {
    "rw": ["read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"],
    "bs": ["512", "4k", "8k", "64k", "4k,64k", "8k,16k", "1m"],
    "bsrange": ["4k-16k", "512-64k", "4k-16k,8k-32k", "4k:8k"],
    "bssplit": ["4k/50:8k/50", "4k/10:64k/90,8k", "4k/50:16k/"],
    "ba": ["4k", "512"],
    "iodepth": ["1", "2", "16", "64"],
    "numjobs": ["1", "2", "3"],
    "size": ["1m", "64m", "1g", "4m"],
    "filesize": ["2m", "8m"],
    "offset": ["0", "4k", "1m"],
    "runtime": ["1", "2s", "500ms", "1m"],
    "time_based": [None, "1", "0"],
    "ramp_time": ["0", "1", "200ms"],
    "direct": ["0", "1"],
    "buffered": ["0", "1"],
    "ioengine": [*catalog.names(), "pvsync", "vsync"],
    "rwmixread": ["0", "30", "50", "100"],
    "rwmixwrite": ["20", "70"],
    "rate_iops": ["100", "1k", "100,50", ",30", "50,", "0"],
    "rate": ["1m", "10m,5m", "500k,"],
    "rate_process": ["linear", "poisson"],
    "thinktime": ["0", "100", "1ms"],
    "thinktime_blocks": ["1", "4"],
    "fsync": ["0", "1", "32"],
    "fdatasync": ["8"],
    "buffer_compress_percentage": ["0", "50", "100"],
    "buffer_compress_chunk": ["512", "0", "4k"],
    "refill_buffers": [None, "1"],
    "zero_buffers": [None],
    "scramble_buffers": ["0", "1"],
    "buffer_pattern": ["0xdeadbeef", '"abc"', '"0xab"'],
    "dedupe_percentage": ["10", "0"],
    "random_distribution": ["random", "zipf:1.2", "pareto:0.3", "normal:10",
                            "zoned:60/10:40/90"],
    "randrepeat": ["0", "1"],
    "randseed": ["7", "0x10"],
    "norandommap": [None],
    "invalidate": ["0", "1"],
    "verify": ["crc32c", "crc32", "xxhash", "0"],
    "verify_backlog": ["16"],
    "verify_fatal": ["1"],
    "filename": ["/var/tmp/iogate-a", "/var/tmp/iogate-a:/var/tmp/iogate-b"],
    "kb_base": ["1000", "1024"],
    "group_reporting": [None],
    "thread": [None],
    "stonewall": [None],
    "description": ["a job"],
    "loops": ["1"],
    "name": ["renamed", "raw=odd name"],
}


@st.composite
def options(draw: st.DrawFn, *, in_job: bool) -> list[tuple[str, str | None]]:
    keys = draw(st.lists(st.sampled_from(sorted(k for k in VALUES if in_job or k != "name")),
                         max_size=8, unique=True))
    return [(k, draw(st.sampled_from(VALUES[k]))) for k in keys]


@st.composite
def job_files(draw: st.DrawFn) -> tuple[str, list[tuple[list, list]]]:
    global_opts = draw(options(in_job=False))
    jobs = draw(st.lists(options(in_job=True), min_size=1, max_size=3))
    lines = ["[global]", "size=4m"] + [k if v is None else f"{k}={v}" for k, v in global_opts]
    for i, opts in enumerate(jobs):
        lines.append(f"[job{i}]")
        lines += [k if v is None else f"{k}={v}" for k, v in opts]
    return "\n".join(lines) + "\n", [(global_opts, opts) for opts in jobs]


def fio_view(global_opts: list, job_opts: list) -> dict[str, str | None]:
    """The options fio applies to a job, by their own names: the job's over the global's."""
    return {**dict(global_opts), **dict(job_opts)}


FUZZ = settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(job_files())
def test_generated_job_files_import_or_say_why(generated: tuple[str, list]) -> None:
    text, jobs = generated
    try:
        suite_text = import_jobfile("gen.fio", text)
    except SuiteError as exc:
        assert exc.problems
        assert all(p.file == "gen.fio" for p in exc.problems)
        return
    suite = load_suite_text(suite_text, "gen.fio", {})
    assert len(suite.cases) == len(jobs)
    for case, (global_opts, job_opts) in zip(suite.cases, jobs, strict=True):
        spec = lower(case.workload, filenames=case.workload.filenames or ["/var/tmp/x"], seed=1)
        fio = fio_view(global_opts, job_opts)
        rw = {"readwrite": "rw"}.get(fio.get("rw") or "read", fio.get("rw") or "read")
        assert spec.rw == rw
        engine = fio.get("ioengine") or "psync"
        expected_engine = {"pvsync": "psync", "vsync": "sync"}.get(engine, engine)
        assert spec.engine == expected_engine
        numjobs = int(fio.get("numjobs") or 1)
        assert spec.numjobs == numjobs
        if not engine_of(expected_engine).queued:
            assert spec.iodepth == 1  # fio's synchronous engines: one request in flight
        else:
            assert spec.iodepth == int(fio.get("iodepth") or 1)
        kb = int(fio.get("kb_base") or 1024)
        mixed = rw in ("rw", "randrw")
        if mixed:
            pct = fio.get("rwmixread"), fio.get("rwmixwrite")
            if pct != (None, None):  # the one given later in the file wins
                later = [k for k, _ in [*global_opts, *job_opts] if k.startswith("rwmix")][-1]
                read_pct = int(fio[later] or 0)
                expected_mix = read_pct if later == "rwmixread" else 100 - read_pct
                assert spec.rwmixread == expected_mix
        if not {"bsrange", "bssplit"} & fio.keys() and fio.get("bs"):
            parts = (fio["bs"] or "").split(",")
            read = fio_size(parts[0], kb)
            write = fio_size(parts[1], kb) if len(parts) > 1 else read
            assert (spec.bs_read, spec.bs_write) == (read, write)
        iops = fio.get("rate_iops")
        if iops and "," not in iops and iops != "0":
            per_direction = fio_size(iops, kb) * numjobs
            want = (per_direction if spec.rw in ("read", "randread") or mixed else 0,
                    per_direction if spec.rw in ("write", "randwrite") or mixed else 0)
            assert (spec.rate_iops_read, spec.rate_iops_write) == want


@FUZZ
@given(st.lists(st.one_of(
    st.sampled_from(["[global]", "[j]", "[", "]", "[j", "size=1m", "bs=4k,", "rw=randrw",
                     "include x", "exec_prerun=ls", "rate_iops=1,2,3,4", "filename=a\\:b:",
                     "bsrange=0-4k", "size=${X", "size=$((1))", "name=", "wait_for=j",
                     "stonewall", "bssplit=4k/200", "numjobs=0", "size=(1/0)"]),
    st.text(max_size=30)), max_size=12))
def test_any_text_gives_a_suite_or_a_suite_error(lines: list[str]) -> None:
    try:
        out = import_jobfile("fuzz.fio", "\n".join(lines))
    except SuiteError as exc:
        assert all(p.file == "fuzz.fio" for p in exc.problems)
        return
    try:
        assert load_suite_text(out, "fuzz.fio", dict(os.environ))
    except SuiteError as exc:  # only a template's target, named when it runs, may be missing
        assert all("size is required: without a filename" in p.message
                   for p in exc.problems), exc


def test_rate_shares_add_up_like_fio_clones() -> None:
    """A check of the numjobs rule on its own: fio gives every clone the rate."""
    text = import_jobfile("r.fio", "[j]\nsize=1m\nrw=randrw\nnumjobs=$ncpus\nrate_iops=10\n")
    (case,) = load_suite_text(text, "r.fio", {}).cases
    spec = lower(case.workload, filenames=["/var/tmp/x"], seed=1)
    ncpus = BUILTINS["ncpus"]()
    assert ncpus is not None
    assert (spec.rate_iops_read, spec.rate_iops_write) == (10 * ncpus, 10 * ncpus)
    assert Fraction(spec.rate_iops_read, ncpus) == 10


# -- fio's own file names, distributions and defaults -----------------------------------

def suite_of(body: str, env: dict[str, str] | None = None) -> tuple[LoadedSuite, str]:
    text = import_jobfile("one.fio", body)
    return load_suite_text(text, "one.fio", env or {}), text


def test_directory_with_nrfiles_is_fio_s_files_each_a_share_of_size() -> None:
    suite, text = suite_of("[job]\nrw=randread\nsize=1m\ndirectory=/var/tmp/d\nnrfiles=3\n")
    (case,) = suite.cases
    # fio's filename_format $jobname.$jobnum.$filenum, each file size/nrfiles (349525 bytes).
    assert case.workload.filenames == [f"/var/tmp/d/job.0.{i}" for i in range(3)]
    assert case.workload.size == 3 * (MiB // 3)
    assert case.workload.size // 3 == MiB // 3
    assert "ignores nrfiles" not in text
    assert "nrfiles=3" in text
    assert "job.0.0" in text


def test_directory_with_nrfiles_and_filesize_is_per_file() -> None:
    suite, _ = suite_of("[job]\nrw=read\nfilesize=64k\ndirectory=/var/tmp/d\nnrfiles=4\n")
    (case,) = suite.cases
    assert case.workload.filenames == [f"/var/tmp/d/job.0.{i}" for i in range(4)]
    assert case.workload.size == 4 * 64 * KiB


@pytest.mark.parametrize(("options", "region", "moved"), [
    # fio moves the smaller of size and the files' total: less than the files is io_size...
    ("nrfiles=4\nfilesize=1m\nsize=2m\n", 4 * MiB, 2 * MiB),
    ("nrfiles=1\nfilesize=1m\nsize=512k\n", MiB, 512 * KiB),
    # ... more than the files is one pass over them, iogate's default.
    ("nrfiles=2\nfilesize=1m\nsize=4m\n", 2 * MiB, None),
])
def test_size_with_filesize_is_the_amount_moved(options: str, region: int,
                                                moved: int | None) -> None:
    suite, text = suite_of(f"[job]\nrw=read\ndirectory=/var/tmp/d\n{options}")
    (case,) = suite.cases
    assert case.workload.size == region
    assert case.workload.io_size == moved
    assert ("amount each thread moves" in text) == (moved is not None)


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
@pytest.mark.parametrize("options", ["nrfiles=4\nfilesize=256k\nsize=512k\n",
                                     "nrfiles=2\nfilesize=256k\nsize=2m\n"])
def test_size_with_filesize_moves_what_fio_moves(tmp_path: Path, options: str) -> None:
    body = f"[job]\nrw=read\nbs=4k\ndirectory={tmp_path}\n{options}"
    (tmp_path / "job.fio").write_text(body)
    out = subprocess.run([FIO or "fio", "--output-format=json", str(tmp_path / "job.fio")],
                         capture_output=True, text=True, check=True, timeout=60, cwd=tmp_path)
    fio_bytes = json.loads(out.stdout)["jobs"][0]["read"]["io_bytes"]
    suite, _ = suite_of(body)
    (case,) = suite.cases
    assert (case.workload.io_size or case.workload.size) == fio_bytes


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
def test_directory_files_are_the_ones_fio_makes(tmp_path: Path) -> None:
    body = f"[job]\nrw=read\nsize=1m\ndirectory={tmp_path}\nnrfiles=3\nnumjobs=2\n"
    (tmp_path / "job.fio").write_text(body)
    subprocess.run([FIO or "fio", "--create_only=1", str(tmp_path / "job.fio")],
                   capture_output=True, check=True, timeout=60, cwd=tmp_path)
    made = {p.name: p.stat().st_size for p in tmp_path.glob("job.*.*")}
    suite, _ = suite_of(body)
    named = {}
    for case in suite.cases:
        files = case.workload.filenames or [case.workload.filename]
        for f in files:
            named[Path(f).name] = case.workload.size // len(files)
    assert named == made


def test_directory_with_numjobs_gives_each_clone_its_own_file() -> None:
    suite, text = suite_of("[job]\nrw=randwrite\nsize=1m\ndirectory=/var/tmp/d\nnumjobs=3\n"
                           "rate_iops=100\n")
    cases = suite.cases
    assert [c.workload.filename for c in cases] == [f"/var/tmp/d/job.{n}.0" for n in range(3)]
    # One workload per clone, each a single thread at fio's per-clone rate, run together.
    assert all(c.workload.numjobs == 1 for c in cases)
    assert [lower(c.workload, filenames=[c.workload.filename], seed=1).rate_iops_write
            for c in cases] == [100, 100, 100]
    assert [[c.id for c in u] for u in plan(cases)] == [[c.id for c in cases]]
    assert "its own files" in text


def test_directory_with_numjobs_from_a_variable_reads_it_or_is_refused(monkeypatch) -> None:
    # a workload per clone needs their number: the variable's, read as fio reads it
    monkeypatch.delenv("N", raising=False)
    with pytest.raises(SuiteError) as info:
        import_jobfile("one.fio", "[job]\nsize=1m\ndirectory=/var/tmp/d\nnumjobs=${N}\n")
    (problem,) = info.value.problems
    assert "numjobs" in str(problem)
    assert "variable 'N' is not set" in str(problem)
    monkeypatch.setenv("N", "3")
    text = import_jobfile("one.fio", "[job]\nsize=1m\ndirectory=/var/tmp/d\nnumjobs=${N}\n")
    assert "name: job.2\n" in text
    assert "numjobs=3 here" in " ".join(line.lstrip("# ") for line in text.splitlines())


def test_fio_s_rand_zones_example_with_an_open_last_zone() -> None:
    spec, text = one("rw=randread\nrandom_distribution=zoned:50/5:30/15:20/\n")
    assert spec.dist == "zoned"
    assert [(z.access, z.size) for z in spec.zones] == [
        (50 * PPM // 100, 5 * PPM // 100), (30 * PPM // 100, 15 * PPM // 100),
        (20 * PPM // 100, 80 * PPM // 100)]
    assert "the rest of the region" in text


@pytest.mark.parametrize(("pattern", "written"), [
    ('"abcd"', b"abcd"), ("-1024", bytes.fromhex("00fcffff")), ("66", b"B"),
    ("0", b"\0"), ("0xabc", bytes.fromhex("0abc")), ("0xff0x14", bytes.fromhex("ff14")),
    ('"abcd"-120xdeadface', bytes.fromhex("61626364f4ffffffdeadface")),  # fio's t0028
    ('-100xab"1"', bytes.fromhex("f6ffffffab31")),
])
def test_fio_patterns_become_the_bytes_fio_writes(pattern: str, written: bytes) -> None:
    assert fio_pattern(pattern) == written
    spec, _ = one(f"rw=write\nbuffer_pattern={pattern}\n")
    assert spec.pattern == written


@pytest.mark.parametrize(("pattern", "says"), [
    ("'pattern.bin'", "a pattern read from a file"), ("0x12%o", "block's offset"),
    ('"ab', "without its closing quote"), ("12zz", "is not a"),
    ("4294967296", "32-bit integers"), ("0xq", "is not a"), ('""', "the pattern is empty"),
])
def test_fio_patterns_iogate_cannot_write_are_refused(pattern: str, says: str) -> None:
    with pytest.raises(ValueProblem, match=says):
        fio_pattern(pattern)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='0123456789abcdefxX"\'%-+ ', max_size=24))
def test_any_pattern_text_gives_bytes_or_a_reason(text: str) -> None:
    try:
        data = fio_pattern(text)
    except ValueProblem as exc:
        assert str(exc)
        return
    assert isinstance(data, bytes)
    assert data


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
@pytest.mark.parametrize("pattern", ['"abcd"-120xdeadface', "-1024", "0xabc",
                                     '66"x"0xFF0X1', '-100xab"1"'])
def test_fio_patterns_are_what_fio_writes(tmp_path: Path, pattern: str) -> None:
    out = tmp_path / "written"
    subprocess.run([FIO or "fio", "--name=p", f"--filename={out}", "--rw=write", "--bs=4k",
                    "--size=4k", f"--buffer_pattern={pattern}", "--output=/dev/null"],
                   capture_output=True, check=True, timeout=60)
    data = fio_pattern(pattern)
    assert out.read_bytes() == (data * (4096 // len(data) + 1))[:4096]


def test_logs_without_a_name_are_fio_s_and_noted() -> None:
    # fio names a log after its job when no name is given (j_bw.1.log ...).
    spec, text = one("rw=read\nwrite_bw_log\nwrite_lat_log\nwrite_iops_log\n"
                     "write_hist_log\nlog_window_value=both\nlog_issue_time=1\n")
    assert spec.rw == "read"
    for option in ("write_bw_log", "write_hist_log", "log_window_value=both",
                   "log_issue_time=1"):
        assert f"{option} (line" in text
    with pytest.raises(SuiteError, match="runtime needs a value"):
        import_jobfile("one.fio", "[j]\nsize=1m\nruntime\n")


def test_fio_s_sequence_distribution_keeps_its_blocks_and_stride() -> None:
    spec, _ = one("rw=randread\nrandom_distribution=sequence:2,0,1\n"
                  "random_sequence_stride=1\n")
    assert (spec.dist, spec.sequence, spec.sequence_stride) == ("sequence", [2, 0, 1], True)
    fixed, _ = one("rw=randread\nrandom_distribution=sequence:2,0,1\n")
    assert (fixed.sequence, fixed.sequence_stride) == ([2, 0, 1], False)
    # Without the distribution the stride means nothing to fio either.
    plain, text = one("rw=randread\nrandom_sequence_stride=1\n")
    assert plain.dist == "uniform"
    assert "no sequence distribution: fio ignores it" in text


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
def test_fio_accepts_the_open_last_zone(tmp_path: Path) -> None:
    job = tmp_path / "z.fio"
    job.write_text("[z]\nrw=randread\nsize=1m\nrandom_distribution=zoned:50/5:30/15:20/\n")
    result = subprocess.run([FIO or "fio", "--parse-only", str(job)], capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("rw", ["randread", "read"])
def test_refill_buffers_of_a_job_that_never_writes_is_dropped(
        rw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A template: the same options for read and write runs; fio ignores refill_buffers
    # (and syncs) for a job that only reads.
    body = "[global]\nrefill_buffers\nfsync=4\nsize=1m\n[job]\nrw=${RW}\n"
    for rw_now, writes in ((rw, False), ("randwrite", True)):
        suite = load_jobfile("one.fio", body, {"RW": rw_now})
        spec = lower(suite.cases[0].workload, filenames=["/var/tmp/x"], seed=1)
        assert (spec.refill, spec.sync_every) == ((True, 4) if writes else (False, 0))
    monkeypatch.setenv("RW", rw)
    text = import_jobfile("one.fio", body)  # in the environment of the import
    flat = " ".join(line.strip().lstrip("# ") for line in text.splitlines())
    assert f"rw=${{RW}} is {rw} here, which never writes: fio ignores it" in flat
    assert "refill_buffers:" not in text
    assert "fsync:" not in text
    monkeypatch.delenv("RW")
    assert "refill_buffers: true" in import_jobfile("one.fio", body)  # not known: kept
    spec, text = one(f"rw={rw}\nrefill_buffers\n")
    assert spec.refill is False
    assert "this job never writes: fio ignores it" in text


def test_the_random_map_comment_says_what_it_changes() -> None:
    _, text = one("rw=randread\nbssplit=4k/50:64k/50\n")
    flat = " ".join(line.lstrip("# ").strip() for line in text.splitlines())
    assert "shortens requests" in flat
    assert "number of requests" in flat
    _, text = one("rw=randread\nbssplit=4k/50:64k/50\nnorandommap\n")
    assert "shortens" not in text


@pytest.mark.parametrize(("body", "message"), [
    ("nrfiles=65\n", "nrfiles=65: iogate's workload has 1 to 64 files"),
    ("nrfiles=0\n", "nrfiles=0: iogate's workload has 1 to 64 files"),
    ("numjobs=1000\n", "would be 1000 workloads, one per clone; the import makes at most 256"),
])
def test_directory_files_and_clones_are_bounded(body: str, message: str) -> None:
    with pytest.raises(SuiteError) as info:
        import_jobfile("one.fio", "[job]\nsize=1m\ndirectory=/var/tmp/d\n" + body)
    (problem,) = info.value.problems
    assert message in str(problem)


@pytest.mark.parametrize(("option", "comment"), [
    ("io_submit_mode=offload", "which is what fio's offload mode does"),
    ("allrandrepeat=1", "the same on every run unless randrepeat: false"),
    ("fadvise_hint=0", "iogate gives the kernel no access-pattern hint"),
    ("fadvise_hint=1", "reads are measured without it"),
    ("create_serialize=0", "lays out the files of a case"),
])
def test_options_that_mean_what_iogate_does_import_with_that_said(option: str,
                                                                 comment: str) -> None:
    suite, text = suite_of(f"[job]\nrw=randread\nsize=1m\n{option}\n")
    assert len(suite.cases) == 1
    assert comment in " ".join(text.split())


@pytest.mark.parametrize(("options", "keys"), [
    ("fallocate=posix\n", {"fallocate": "posix"}), ("fallocate=1\n", {"fallocate": "posix"}),
    ("fallocate=0\n", {"fallocate": "none"}), ("fallocate=keep\n", {"fallocate": "keep"}),
    ("fallocate=native\n", {}), ("overwrite=1\n", {"overwrite": True}), ("overwrite=0\n", {}),
    ("create_on_open=1\n", {"fallocate": "none"}), ("clocksource=cpu\n", {}),
    ("norandommap\n", {"norandommap": True}), ("random_generator=lfsr\nnorandommap\n", {}),
])
def test_how_files_and_offsets_are_prepared_imports_as_keys(options: str,
                                                           keys: dict[str, object]) -> None:
    suite, _ = suite_of(f"[job]\nrw=randwrite\nsize=1m\n{options}")
    (case,) = suite.cases
    given = {k: v for k, v in case.workload.model_dump(exclude_unset=True).items()
             if k in ("fallocate", "overwrite", "norandommap")}
    assert given == keys


@pytest.mark.parametrize("option", ["io_submit_mode=bogus", "allrandrepeat=2",
                                    "fadvise_hint=sequential"])
def test_other_values_of_those_options_are_refused(option: str) -> None:
    with pytest.raises(SuiteError) as info:
        suite_of(f"[job]\nrw=randread\nsize=1m\n{option}\n")
    assert f"{option}: fio's {option.split('=')[0]} is not supported" in str(info.value)


def test_a_warning_of_the_imported_suite_is_told_at_the_fio_line(tmp_path: Path) -> None:
    """rwmixread beside per-direction rates that set another mix: import, validate and run
    say so at the job file's line, not the generated suite's."""
    job = tmp_path / "mix.fio"
    job.write_text("[global]\nioengine=null\nsize=1m\n\n[mixed]\nrw=randrw\nrwmixread=70\n"
                   "rate_iops=100,500\n")
    for args in (["import", str(job), "-o", str(tmp_path / "mix.yaml")],
                 ["validate", str(job)]):
        result = subprocess.run([sys.executable, "-m", "iogate", *args], capture_output=True,
                                text=True, cwd=tmp_path, stdin=subprocess.DEVNULL)
        assert result.returncode == 0, result.stderr
        assert f"{job}:8:1: [mixed] rate_iops: warning: rate_iops {{read: 100, write: 500}} " \
               "sets the mix: 100 reads/s and 500 writes/s, 16.7% reads" in result.stderr


def test_a_refused_option_and_a_rule_of_another_job_are_named_together() -> None:
    # [file1] converts whole but breaks a suite rule; [file2] has an option refused: one
    # validate names both, not the rule only once the option is gone
    text = ("[global]\nrw=randrw\nbsrange=64K-256K\nverify=crc32\nsize=1m\n[file1]\n"
            "ioengine=sync\n[file2]\nstonewall\nioengine=libaio\nmem=shmhuge\niodepth=4\n")
    with pytest.raises(SuiteError) as info:
        import_jobfile("stages.fio", text)
    said = [(p.line, p.message) for p in info.value.problems]
    assert [line for line, _ in said] == [6, 11]
    assert "verify needs one block size for writes" in said[0][1]
    assert "fio's mem is not supported" in said[1][1]
    # a refused option of [global] leaves every job short of it: its rules are not judged
    with pytest.raises(SuiteError) as info:
        import_jobfile("stages.fio", text.replace("size=1m\n", "size=1m\nmem=shmhuge\n"))
    assert not any("verify" in p.message for p in info.value.problems)
    assert [p.line for p in info.value.problems] == [6, 12]  # the two mem= options
