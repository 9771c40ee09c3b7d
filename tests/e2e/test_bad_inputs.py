"""Bad inputs end the command with one line naming the input and an exit code that claims no
verdict, never a traceback, a wait without end or a machine's memory: JSON nested without
end, numbers of 100,000 digits and documents of the wrong shape given to compare, --baseline
and --save-baseline; host lists from a device that never ends or a FIFO nobody writes;
includes and state files that are FIFOs; IOGATE_LIB and IOGATE_TMPDIR naming what cannot be
used; a million repeats. Provoked for real, each through the command."""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iogate.engine.native import ABI_VERSION

IOGATE = [sys.executable, "-m", "iogate"]
MEMORY = 4 << 30  # the most a command here may map: a reader without bound dies, not the machine


def iogate(*args: str, cwd: Path, env: dict[str, str] | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*IOGATE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})},
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                                (MEMORY, MEMORY)))


def suite(tmp_path: Path, extra: str = "") -> tuple[Path, Path]:
    """A suite writing a file in ``tmp_path``; the suite and its target, which exists once
    any I/O was done."""
    target = tmp_path / "target.data"
    path = tmp_path / "w.suite.yaml"
    path.write_text(f"suite: w\nworkloads:\n  - name: w\n    ioengine: psync\n    rw: write\n"
                    f"    size: 256KiB\n    filename: {target}\n{extra}")
    return path, target


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_one_line(proc: subprocess.CompletedProcess[str], code: int, *said: str) -> None:
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    # each message whole, its words in order (a long one is wrapped to a log's 120 columns)
    flat = " ".join(proc.stderr.split())
    assert all(" ".join(s.split()) in flat for s in said), proc.stderr


def results(*cases: dict, environment: object = None) -> str:
    env = {"host": "ci-7"} if environment is None else environment
    return json.dumps({"schema_version": 1, "iogate_version": "0.1.0", "environment": env,
                       "summary": {}, "cases": list(cases)})


def case(case_id: str = "w.suite.yaml::w", **extra: object) -> dict:
    return {"id": case_id, "outcome": "passed", "metrics": {"read.iops": 1000.0}, **extra}


# -- compare, --baseline, --save-baseline -----------------------------------------------------

@pytest.mark.parametrize(("text", "problem"), [
    ("[" * 100_000, "nested more than 64 levels deep"),
    ('{"a":' * 100_000 + "1" + "}" * 100_000, "nested more than 64 levels deep"),
    (results(case()).replace("1000.0", "7" * 100_000), "a number of 100000 characters"),
    (results(case(), environment="ci-7"), "environment must be an object, not a string"),
    (results(case(environment="ci-7")), "cases[0].environment must be an object"),
    (results(case(), case()), "cases[1]: case 'w.suite.yaml::w' is in the document twice"),
], ids=["open-brackets", "nested-objects", "long-number", "environment-string",
        "case-environment-string", "case-twice"])
def test_compare_refuses_a_bad_document_naming_it(tmp_path: Path, text: str,
                                                  problem: str) -> None:
    good = tmp_path / "good.json"
    good.write_text(results(case()))
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    for old, new in ((bad, good), (good, bad)):
        proc = iogate("compare", str(old), str(new), cwd=tmp_path)
        assert_one_line(proc, 2, f"iogate compare: {bad}: ", problem)


def test_compare_reads_a_device_that_never_ends_up_to_its_bound(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(results(case()))
    proc = iogate("compare", "/dev/zero", str(good), cwd=tmp_path)
    assert_one_line(proc, 2, "/dev/zero: larger than 256MiB, the most a results document or "
                             "baseline file may have")


def test_a_baseline_nested_too_deep_is_refused_before_the_run(tmp_path: Path) -> None:
    path, target = suite(tmp_path)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    proc = iogate("run", str(path), "--baseline", str(deep), cwd=tmp_path)
    assert_one_line(proc, 2, f"{deep}: nested more than 64 levels deep")
    assert not target.exists()  # no I/O


@pytest.mark.parametrize(("text", "problem"), [
    ("[" * 100_000, "nested more than 64 levels deep"),
    ('{"entries": []}', "not a baseline file: format is None"),
    (results(case()), "not a baseline file: an iogate results document"),
], ids=["deep", "not-a-baseline", "results-document"])
@pytest.mark.parametrize("option", ["--save-baseline", "--save-baseline-all"])
def test_a_file_the_run_cannot_merge_its_baseline_into_is_refused_before_it(
        tmp_path: Path, text: str, problem: str, option: str) -> None:
    path, target = suite(tmp_path)
    kept = tmp_path / "b.json"
    kept.write_text(text)
    before = digest(kept)
    proc = iogate("run", str(path), option, str(kept), cwd=tmp_path)
    assert_one_line(proc, 2, f"iogate: {option} {kept}: {problem}")
    assert not target.exists()  # no I/O
    assert digest(kept) == before


# -- host lists ----------------------------------------------------------------------------------

def test_a_host_list_from_a_device_that_never_ends_is_refused_at_its_bound(
        tmp_path: Path) -> None:
    path, target = suite(tmp_path)
    proc = iogate("run", str(path), "--backend", "fio", "--hosts", "@/dev/zero", cwd=tmp_path)
    assert_one_line(proc, 2, "cannot read the host list /dev/zero: larger than 1MiB")
    assert not target.exists()


def _caught_signals(pid: int) -> set[int]:
    """The signals process ``pid`` has handlers for (SigCgt in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return set()
    found = re.search(r"^SigCgt:\s*([0-9a-f]+)", status, re.M)
    mask = int(found.group(1), 16) if found else 0
    return {n for n in range(1, 64) if mask >> (n - 1) & 1}


def test_a_host_list_fifo_nobody_writes_yields_to_sigterm(tmp_path: Path) -> None:
    path, target = suite(tmp_path)
    fifo = tmp_path / "hosts"
    os.mkfifo(fifo)
    proc = subprocess.Popen([*IOGATE, "run", str(path), "--backend", "fio", "--hosts",
                             f"@{fifo}"], cwd=tmp_path, text=True, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        while proc.poll() is None and not ({signal.SIGINT, signal.SIGTERM}
                                           <= _caught_signals(proc.pid)):
            time.sleep(0.01)
        time.sleep(1)  # the command goes on to read the host list, and waits there
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    assert not target.exists(), stderr


# -- FIFOs named from within suites ----------------------------------------------------------------

def test_an_include_that_is_a_fifo_is_refused_not_waited_for(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "opts.fio")
    job = tmp_path / "job.fio"
    job.write_text(f"[global]\nioengine=psync\nsize=256k\nfilename={tmp_path / 'target.data'}\n"
                   "[w]\nrw=write\ninclude opts.fio\n")
    proc = iogate("validate", str(job), cwd=tmp_path, timeout=60)
    assert_one_line(proc, 2, f"{job}:7:1: [w]: include opts.fio: not a regular file (a FIFO)")


def test_verify_refuses_a_state_file_that_is_a_fifo(tmp_path: Path) -> None:
    state = tmp_path / "state.fifo"
    os.mkfifo(state)
    path, target = suite(tmp_path, f"    allow_overwrite: true\n    verify: crc32c\n"
                                   f"    fdatasync: 16\n    verify_state: {state}\n")
    target.write_bytes(bytes(256 << 10))
    before = digest(target)
    proc = iogate("verify", str(path), cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"error: {state}: not a regular file (a FIFO)" in proc.stdout
    assert "Traceback" not in proc.stderr
    assert digest(target) == before


# -- the environment ------------------------------------------------------------------------------

def _fake_library(tmp_path: Path, name: str, source: str) -> Path:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to build a library with")
    c = tmp_path / f"{name}.c"
    c.write_text(source)
    built = tmp_path / f"{name}.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(built), str(c)], check=True)
    return built


def _other_library(tmp_path: Path) -> Path:
    import _ctypes  # a shared library of the interpreter's own, without libiogate's functions

    if not getattr(_ctypes, "__file__", None):
        pytest.skip("_ctypes is built into the interpreter")
    return Path(_ctypes.__file__)


@pytest.mark.parametrize(("library", "problem"), [
    (lambda tmp: tmp / "missing.so", "no such file"),
    (lambda tmp: tmp, "is a directory"),
    (lambda tmp: tmp / "w.suite.yaml", "not libiogate"),
    (_other_library, "not libiogate"),
    (lambda tmp: _fake_library(tmp, "old", "unsigned iog_abi_version(void) { return 5; }\n"),
     f"libiogate of ABI version 5, these bindings need {ABI_VERSION}"),
    (lambda tmp: _fake_library(tmp, "bare",
                               f"unsigned iog_abi_version(void) {{ return {ABI_VERSION}; }}\n"),
     f"libiogate of ABI version {ABI_VERSION} without a function these bindings call"),
], ids=["missing", "directory", "text-file", "another-library", "old-abi", "no-functions"])
def test_an_unusable_library_is_one_line_and_no_verdict(tmp_path: Path, library,
                                                        problem: str) -> None:
    path, target = suite(tmp_path)
    lib = library(tmp_path)
    for command in (["run", str(path)], ["validate", str(path)]):
        proc = iogate(*command, cwd=tmp_path, env={"IOGATE_LIB": str(lib)})
        assert_one_line(proc, 3, f"iogate: IOGATE_LIB={lib}: {problem}")
        assert len(proc.stderr.splitlines()) == 1, proc.stderr
        assert not target.exists()


@pytest.mark.parametrize(("scratch", "problem"), [
    (lambda tmp: tmp / "missing", "no such directory"),
    (lambda tmp: tmp / "w.suite.yaml", "is not a directory"),
], ids=["missing", "regular-file"])
@pytest.mark.parametrize("json_out", [False, True])
def test_an_unusable_iogate_tmpdir_is_refused_not_replaced(tmp_path: Path, scratch,
                                                           problem: str, json_out: bool) -> None:
    path = tmp_path / "w.suite.yaml"  # no filename: a scratch file in IOGATE_TMPDIR
    path.write_text("suite: w\nworkloads:\n  - name: w\n    ioengine: psync\n    rw: write\n"
                    "    size: 256KiB\n")
    where = scratch(tmp_path)
    extra = ["--json", str(tmp_path / "r.json")] if json_out else []
    proc = iogate("run", str(path), *extra, cwd=tmp_path, env={"IOGATE_TMPDIR": str(where)})
    assert_one_line(proc, 2, f"iogate: IOGATE_TMPDIR={where}: {problem}; set it to a "
                             "directory")
    assert "passed" not in proc.stderr
    assert not (tmp_path / "r.json").exists()


def test_a_million_repeats_are_refused_before_the_run(tmp_path: Path) -> None:
    path, target = suite(tmp_path, "    repeat: 1000000\n")
    proc = iogate("run", str(path), cwd=tmp_path)
    assert_one_line(proc, 2, f"{path}:8:13: workloads[0].repeat: must be at most 10000")
    assert not target.exists()


NULL_SUITE = "suite: x\nworkloads:\n  - name: w\n    ioengine: null\n    rw: read\n    size: 1MiB\n"


def test_two_files_whose_cases_share_an_id_are_refused_before_the_run(tmp_path: Path) -> None:
    """Results, baselines and the history know a case by file name and workload: two
    files of one name in two directories would write one id twice, and a baseline saved
    from that run could not be read back."""
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "x.suite.yaml").write_text(NULL_SUITE)
    proc = iogate("run", "a", "b", "--json", "r.json", "--save-baseline", "base.json",
                  cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "x.suite.yaml::w has the id of a/x.suite.yaml's" in proc.stderr, proc.stderr
    assert not (tmp_path / "r.json").exists()
    assert not (tmp_path / "base.json").exists()
    # one file named twice is one file: its case runs once
    proc = iogate("run", "a/x.suite.yaml", "a", "--json", "r.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [c["id"] for c in json.loads((tmp_path / "r.json").read_text())["cases"]] == [
        "x.suite.yaml::w"]
