"""Which files are iogate's own: only the ledger of the files it made (by device, inode and
birth time or inode generation, else the change time it left them with) says so. Each way a
user's file could pass for iogate's is tried for real: a forged note or extended attribute,
a user's file put where iogate's was (at the same inode number where the filesystem reuses
it), a file cut short between the check and the layout, a state file named over a user's
file or over another workload's target, a state directory others may write or none at all.
Every protected file is hashed before and after."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.test_races import swapping
from tests.e2e.test_safety import digest, owned, user_file, workload
from tests.faults import FaultFS, require_root

from iogate import ownership
from iogate.engine.isolated import run as engine_run
from iogate.results import RunResult
from iogate.runner import run_cases
from iogate.spec import load_suite_text

IOGATE = [sys.executable, "-m", "iogate"]
OLD_MARK = b"target created by iogate"  # what iogate once wrote on or beside its files


def run(directory: Path, body: str, *args: str, env: dict[str, str] | None = None
        ) -> tuple[subprocess.CompletedProcess[str], dict]:
    """``iogate run`` on a suite of ``body`` in ``directory``: the process and its results."""
    (directory / "t.suite.yaml").write_text("suite: t\nworkloads:\n" + body)
    out = directory / "r.json"
    with contextlib.suppress(FileNotFoundError):
        out.unlink()
    proc = subprocess.run([*IOGATE, "run", "t.suite.yaml", "--json", str(out), *args],
                          cwd=directory, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, json.loads(out.read_text()) if out.exists() else {}


def cases_of(directory: Path, body: str) -> list:
    return list(load_suite_text("suite: t\nworkloads:\n" + body,
                                directory / "t.suite.yaml").cases)


def error_of(doc: dict) -> str:
    [case] = doc["cases"]
    assert case["outcome"] == "error", case
    return str(case["error"])


def ledger_proof(path: Path) -> str | None:
    """The proof iogate's ledger holds for the file at ``path`` (None: no entry)."""
    st = path.stat()
    entry = ownership.state_dir() / f"{st.st_dev:x}-{st.st_ino:x}"
    return json.loads(entry.read_text())["proof"] if entry.exists() else None


# -- nothing on or beside a file makes it iogate's ---------------------------------------------

def test_a_note_beside_a_file_does_not_make_it_iogates(disk_dir: Path) -> None:
    target = disk_dir / "victim.dat"
    before = user_file(target)
    (disk_dir / "victim.dat.iogate").write_bytes(OLD_MARK)
    proc, doc = run(disk_dir, workload(str(target)))
    assert digest(target) == before, proc.stdout + proc.stderr
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "an existing file iogate did not create" in error_of(doc)


def test_an_extended_attribute_does_not_make_a_file_iogates(disk_dir: Path) -> None:
    target = disk_dir / "victim.dat"
    before = user_file(target)
    os.setxattr(target, "user.iogate", OLD_MARK)
    proc, doc = run(disk_dir, workload(str(target)))
    assert digest(target) == before, proc.stdout + proc.stderr
    assert proc.returncode == 3, proc.stdout + proc.stderr
    # the way on: take it once, or let iogate make it anew
    assert f"--allow-overwrite {target} once" in error_of(doc)
    assert "remove the file, so that iogate creates it anew" in error_of(doc)


def test_allow_overwrite_once_makes_a_written_file_iogates(disk_dir: Path) -> None:
    target = disk_dir / "old-scratch.img"
    before = user_file(target)
    os.setxattr(target, "user.iogate", OLD_MARK)  # made by an older iogate
    proc, _ = run(disk_dir, workload(str(target)), "--allow-overwrite", str(target))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert digest(target) != before
    assert owned(target)
    again, _ = run(disk_dir, workload(str(target), "randwrite"))
    assert again.returncode == 0, again.stdout + again.stderr


# -- a user's file where iogate's was, on each kind of filesystem ------------------------------

# What tells a file from a later one at its inode on each filesystem (how the proof the ledger
# holds begins): a fresh one of each is mounted where the test can (root).
KINDS = {
    "disk": ("born", "generation", "changed"),  # whatever holds scratch_dir (ext4: both)
    "tmpfs": ("born", "changed"),  # a birth time on recent kernels
    "ext4-without-birth-time": ("generation",),  # 128-byte inodes: no room for a birth time
    "ramfs": ("changed",),  # no birth time, no generation, no extended attributes
    "fuse": ("changed",),  # the same, and inode numbers reused (tests/faults: faultfs)
}


@contextlib.contextmanager
def filesystem(kind: str, base: Path) -> Iterator[Path]:
    """A directory on a fresh filesystem of ``kind`` (skips where it cannot be had)."""
    if kind == "disk":
        yield base
        return
    if kind == "fuse":
        with FaultFS(base=base) as fs:
            yield fs.path
        return
    require_root()
    mnt = base / "mnt"
    mnt.mkdir()
    if kind == "ext4-without-birth-time":
        if shutil.which("mkfs.ext4") is None:
            pytest.skip("needs mkfs.ext4")
        image = base / "fs.img"
        with open(image, "wb") as f:
            f.truncate(32 << 20)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-I", "128", str(image)], check=True,
                       capture_output=True)
        command = ["mount", "-o", "loop", str(image), str(mnt)]
    else:
        command = ["mount", "-t", kind, kind, str(mnt)]
    mounted = subprocess.run(command, capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount {kind} here: {mounted.stderr.strip()}")
    try:
        yield mnt
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.parametrize("kind", KINDS)
def test_a_users_file_put_where_iogate_removed_its_own_is_not_iogates(disk_dir: Path,
                                                                        kind: str) -> None:
    with filesystem(kind, disk_dir) as where:
        target = where / "data.img"
        made, _ = run(disk_dir, workload(str(target)))
        assert made.returncode == 0, made.stdout + made.stderr
        proof = ledger_proof(target)
        again, _ = run(disk_dir, workload(str(target), "randwrite"))  # iogate's: rewritten
        assert again.returncode == 0, again.stdout + again.stderr
        inode = target.stat().st_ino
        target.unlink()
        before = user_file(target)
        proc, doc = run(disk_dir, workload(str(target)))
        assert digest(target) == before, proc.stdout + proc.stderr
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert "an existing file iogate did not create" in error_of(doc)
        if kind == "ext4-without-birth-time":  # a fresh ext4 hands the freed inode out again
            assert target.stat().st_ino == inode
        assert proof is not None, proof
        assert proof.startswith(KINDS[kind]), proof


# -- reading a file that is not iogate's never lays it out -------------------------------------

def reads(target: Path, extra: str = "", size: str = "1MiB") -> str:
    return (f"  - name: r\n    ioengine: psync\n    rw: read\n    size: {size}\n"
            f"    filename: {target}\n{extra}")


def recording(seen: list) -> Callable[..., RunResult]:
    """The real engine, keeping the job specs it was given."""
    def engine(specs: list, **kwargs: Any) -> RunResult:
        seen.extend(specs)
        return engine_run(specs, **kwargs)
    return engine


def test_only_iogates_own_files_or_those_it_may_overwrite_are_laid_out(disk_dir: Path) -> None:
    user, own, allowed = (disk_dir / n for n in ("user.bin", "own.bin", "allowed.bin"))
    user_file(user)
    user_file(allowed)
    for target, extra, fixed in ((user, "", True), (own, "", False),
                                 (allowed, "    allow_overwrite: true\n", False)):
        seen: list = []
        [result] = run_cases(cases_of(disk_dir, reads(target, extra)), engine=recording(seen))
        assert result.outcome == "passed", result.error
        assert [s.no_layout for s in seen] == [fixed], target


def test_a_file_cut_short_after_the_check_is_never_extended(disk_dir: Path) -> None:
    """Long enough when checked, cut to a quarter before the engine starts: the read meets
    the end of the file and the case is an error; the file keeps what was left of it."""
    target = disk_dir / "data.bin"
    user_file(target)
    left: list[str] = []

    def cut() -> None:
        os.truncate(target, 256 << 10)
        left.append(digest(target))

    [result] = run_cases(cases_of(disk_dir, reads(target)), engine=swapping(cut))
    assert target.stat().st_size == 256 << 10
    assert digest(target) == left[0]
    assert result.outcome == "error", result.outcome
    assert "end of file" in (result.error or ""), result.error


CUTTER = '''\
import os
from iogate.hooks import hookimpl


@hookimpl
def iogate_environment(target):
    # asked about the target after it was checked, before the engine lays anything out
    if target and target.endswith("data.bin") and os.path.getsize(target) > 262144:
        os.truncate(target, 262144)
'''


@pytest.mark.parametrize("backend", ["native", "fio"])
def test_a_file_cut_short_after_the_check_makes_the_run_an_error(disk_dir: Path,
                                                                 backend: str) -> None:
    """The whole command, with a plugin that cuts the file short when asked about it; fio
    reads under its --readonly, where it extends nothing either."""
    if backend == "fio" and shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    plugins = disk_dir / "plugins"
    (plugins / "cutter-0.dist-info").mkdir(parents=True)
    (plugins / "cutter.py").write_text(CUTTER)
    (plugins / "cutter-0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: cutter\nVersion: 0\n")
    (plugins / "cutter-0.dist-info" / "entry_points.txt").write_text(
        "[iogate]\ncutter = cutter\n")
    target = disk_dir / "data.bin"
    user_file(target)
    with open(target, "rb") as f:
        left = f.read(256 << 10)
    path = os.pathsep.join(p for p in (str(plugins), os.environ.get("PYTHONPATH")) if p)
    proc, doc = run(disk_dir, reads(target), "--backend", backend, env={"PYTHONPATH": path})
    assert target.read_bytes() == left, proc.stdout + proc.stderr
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert ("end of file" if backend == "native" else "Input/output error") in error_of(doc)


# -- verify_state files ----------------------------------------------------------------------

def verified(name: str, target: Path, state: Path, extra: str = "") -> str:
    return (f"  - name: {name}\n    ioengine: psync\n    rw: write\n    size: 256KiB\n"
            f"    verify: crc32c\n    filename: {target}\n    verify_state: {state}\n{extra}")


def test_a_state_file_never_replaces_a_users_file(disk_dir: Path) -> None:
    state = disk_dir / "notes.txt"
    before = user_file(state, 4096)
    proc, doc = run(disk_dir, verified("w", disk_dir / "new.img", state))
    assert digest(state) == before, proc.stdout + proc.stderr
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"verify_state {state}: an existing file iogate did not create" in error_of(doc)


def test_a_state_file_iogate_made_is_made_anew_at_the_next_run(disk_dir: Path) -> None:
    state = disk_dir / "w.state"
    body = verified("w", disk_dir / "new.img", state)
    for _ in range(2):
        proc, _ = run(disk_dir, body)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert owned(state)


@pytest.mark.parametrize("whose", ["a user's", "iogate's"])
def test_a_state_file_never_replaces_another_workloads_target(disk_dir: Path,
                                                              whose: str) -> None:
    """A workload of the group reads the file another one names as its state file: iogate's
    own file as well as a user's (read as it is) are refused as state files, when the
    targets are checked (the command line refuses such a suite before, as a usage error)."""
    other = disk_dir / "other.bin"
    if whose == "iogate's":
        [made] = run_cases(cases_of(disk_dir, workload(str(other))))
        assert made.outcome == "passed", made.error
    else:
        user_file(other)
    before = digest(other)
    body = reads(other, "    group: g\n", "256KiB") \
        + verified("w", disk_dir / "new.img", other, "    group: g\n")
    results = run_cases(cases_of(disk_dir, body))
    assert digest(other) == before, [r.error for r in results]
    assert {(r.outcome, r.error) for r in results} == {(
        "error", f"verify_state {other} is the target {other} of another workload of this "
        "run: the state file must be another file, best on another filesystem")}


# -- the state directory ---------------------------------------------------------------------

def test_a_state_directory_others_may_write_is_not_trusted(disk_dir: Path) -> None:
    state = disk_dir / "state"
    env = {ownership.STATE_ENV: str(state)}
    target = disk_dir / "scratch.img"
    made, _ = run(disk_dir, workload(str(target)), env=env)
    assert made.returncode == 0, made.stdout + made.stderr
    assert (state.stat().st_mode & 0o777) == 0o700
    before = digest(target)
    state.chmod(0o777)  # anyone could have written an entry there
    proc, doc = run(disk_dir, workload(str(target)), env=env)
    assert digest(target) == before, proc.stdout + proc.stderr
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"the state directory {state} can be written by others, so it is not trusted" \
        in proc.stderr
    assert "an existing file iogate did not create" in error_of(doc)
    state.chmod(0o700)
    ok, _ = run(disk_dir, workload(str(target)), env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_a_ledger_that_cannot_be_written_makes_files_iogates_for_the_run_only(
        disk_dir: Path) -> None:
    (disk_dir / "not-a-directory").write_text("")
    env = {ownership.STATE_ENV: str(disk_dir / "not-a-directory" / "state")}
    target = disk_dir / "scratch.img"
    # made by the first workload, written again by the second: the same run
    body = workload(str(target)) + workload(str(target), "randwrite").replace("name: w", "name: v")
    proc, doc = run(disk_dir, body, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [c["outcome"] for c in doc["cases"]] == ["passed", "passed"]
    assert proc.stderr.count("cannot be used (Not a directory)") == 1, proc.stderr
    before = digest(target)
    later, doc = run(disk_dir, workload(str(target)), env=env)
    assert digest(target) == before, later.stdout + later.stderr
    assert later.returncode == 3, later.stdout + later.stderr
    assert "an existing file iogate did not create" in error_of(doc)
