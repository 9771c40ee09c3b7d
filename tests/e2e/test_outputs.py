"""Output files never destroy anything: every output path is checked before a run (exit 2
naming the option), only regular files are ever replaced (never a device node, FIFO, socket
or directory; a symbolic link is written through), the mode follows the umask, and a results
file that cannot be written at the end of a run leaves the results in a file that stderr
names. Provoked for real: device nodes made with mknod, a tmpfs read-only or full."""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.faults import require_root, tmpfs

IOGATE = [sys.executable, "-m", "iogate"]

SUITE = """\
suite: out
workloads:
  - name: one
    ioengine: null
    rw: read
    size: 1MiB
  - name: two
    ioengine: null
    rw: write
    size: 1MiB
"""


def iogate(*args: str, cwd: Path, umask: int | None = None,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*IOGATE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})},
                          preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "out.suite.yaml"
    path.write_text(SUITE)
    return path


def char_device(path: Path) -> Path:
    """A throwaway character device with the numbers of /dev/null (root only)."""
    require_root()
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return path


def assert_refused_before_running(proc: subprocess.CompletedProcess[str], option: str,
                                  problem: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert option in proc.stderr, proc.stderr
    assert problem in proc.stderr, proc.stderr
    assert "passed" not in proc.stderr  # not one case ran


# -- refused before the run --------------------------------------------------------------------

def test_a_device_node_as_the_results_file_is_refused_and_stays(tmp_path: Path,
                                                                suite: Path) -> None:
    device = char_device(tmp_path / "null")
    proc = iogate("run", str(suite), "--json", str(device), cwd=tmp_path)
    assert_refused_before_running(proc, "--json", "not a regular file (a character device)")
    st = os.lstat(device)
    assert stat.S_ISCHR(st.st_mode)
    assert st.st_rdev == os.makedev(1, 3)


@pytest.mark.parametrize(("where", "problem"), [
    ("missing/r.json", "the directory"),
    ("adir", "is a directory"),
    ("adir/", "names a directory"),
])
def test_an_unusable_results_path_is_refused_before_the_run(tmp_path: Path, suite: Path,
                                                            where: str, problem: str) -> None:
    (tmp_path / "adir").mkdir()
    proc = iogate("run", str(suite), "--json", where, cwd=tmp_path)
    assert_refused_before_running(proc, "--json", problem)
    assert (tmp_path / "adir").is_dir()
    assert not any((tmp_path / "adir").iterdir())


def test_a_read_only_filesystem_is_refused_before_the_run(tmp_path: Path, suite: Path) -> None:
    with tmpfs("1m") as ro:
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
        proc = iogate("run", str(suite), "--json", str(ro / "r.json"), cwd=tmp_path)
        assert_refused_before_running(proc, "--json", "Read-only file system")


def test_a_baseline_to_save_in_a_missing_directory_is_refused(tmp_path: Path,
                                                              suite: Path) -> None:
    proc = iogate("run", str(suite), "--save-baseline", "nowhere/b.json", cwd=tmp_path)
    assert_refused_before_running(proc, "--save-baseline", "does not exist")


def test_report_outputs_are_refused_before_the_run(tmp_path: Path, suite: Path) -> None:
    device = char_device(tmp_path / "null")
    proc = iogate("run", str(suite), "--html", str(device), cwd=tmp_path)
    assert_refused_before_running(proc, "--html", "not a regular file")
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    proc = iogate("run", str(suite), "--html", "missing/r.html", cwd=tmp_path)
    assert_refused_before_running(proc, "--html", "does not exist")
    (tmp_path / "afile").write_text("keep")
    proc = iogate("run", str(suite), "--artifacts", "afile", cwd=tmp_path)
    assert_refused_before_running(proc, "--artifacts", "is not a directory")
    assert (tmp_path / "afile").read_text() == "keep"


def test_an_artifacts_directory_is_made_but_never_its_parents(tmp_path: Path,
                                                              suite: Path) -> None:
    # Like every other output's directory, the parent must exist: a mistyped path is
    # refused, not made.
    proc = iogate("run", str(suite), "--artifacts", "nodir/sub", cwd=tmp_path)
    assert_refused_before_running(proc, "--artifacts nodir/sub", "nodir does not exist")
    assert not (tmp_path / "nodir").exists()
    proc = iogate("run", str(suite), "--artifacts", "made", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "made").is_dir()


def test_export_and_import_outputs_are_checked_first(tmp_path: Path, suite: Path) -> None:
    device = char_device(tmp_path / "null")
    proc = iogate("export", str(suite), "-o", str(device), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "--output" in proc.stderr, proc.stderr
    job = tmp_path / "j.fio"
    job.write_text("[j]\nrw=read\nsize=1m\nioengine=null\n")
    proc = iogate("import", str(job), "-o", str(device), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "not a regular file" in proc.stderr, proc.stderr
    proc = iogate("import", str(job), "-o", "missing/s.suite.yaml", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "does not exist" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode)


# -- how a file is written -------------------------------------------------------------------

def test_a_symlink_is_written_through_and_stays_a_link(tmp_path: Path, suite: Path) -> None:
    real = tmp_path / "store" / "results.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    proc = iogate("run", str(suite), "--json", str(link), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert link.is_symlink()
    assert os.readlink(link) == str(real)
    assert len(json.loads(real.read_text())["cases"]) == 2
    assert sorted(p.name for p in real.parent.iterdir()) == ["results.json"]  # no temporary


def test_the_mode_follows_the_umask_or_the_replaced_file(tmp_path: Path, suite: Path) -> None:
    proc = iogate("run", str(suite), "--json", "new.json", cwd=tmp_path, umask=0o022)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644
    existing = tmp_path / "existing.json"
    existing.write_text("{}")
    existing.chmod(0o640)
    proc = iogate("run", str(suite), "--json", "existing.json", cwd=tmp_path, umask=0o077)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640
    assert len(json.loads(existing.read_text())["cases"]) == 2


@pytest.fixture
def specials(tmp_path: Path) -> Iterator[dict[str, Callable[[], Path]]]:
    made: list[socket.socket] = []

    def fifo() -> Path:
        path = tmp_path / "fifo"
        os.mkfifo(path)
        return path

    def sock() -> Path:
        path = tmp_path / "sock"
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        made.append(s)
        return path

    def directory() -> Path:
        path = tmp_path / "dir"
        path.mkdir()
        return path

    yield {"fifo": fifo, "socket": sock, "directory": directory,
           "device": lambda: char_device(tmp_path / "dev")}
    for s in made:
        s.close()


@pytest.mark.parametrize("kind", ["fifo", "socket", "directory", "device"])
def test_write_whole_never_replaces_a_special_file(kind: str, specials: dict) -> None:
    from iogate.files import OutputError, write_whole

    path = specials[kind]()
    before = os.lstat(path)
    with pytest.raises(OutputError) as caught:
        write_whole(path, "x", "--json")
    assert "--json" in str(caught.value)
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_baseline_save_is_the_same_writer(tmp_path: Path) -> None:
    from iogate.baseline import Baseline, BaselineError

    real = tmp_path / "b.json"
    real.write_text("{}")
    real.chmod(0o664)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    Baseline([]).save(link)
    assert link.is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o664
    assert json.loads(real.read_text())["format"] == "iogate-baseline"
    with pytest.raises(BaselineError, match="not a regular file"):
        Baseline([]).save(char_device(tmp_path / "dev"))


# -- a results file that cannot be written at the end ----------------------------------------

LONG_SUITE = """\
suite: late
workloads:
  - name: first
    ioengine: null
    rw: read
    size: 1MiB
  - name: long
    ioengine: null
    rw: read
    size: 1MiB
    runtime: 120s
    time_based: true
"""


def fill(directory: Path) -> None:
    """Fill the filesystem of ``directory`` to the last byte."""
    with open(directory / "filler", "wb", buffering=0) as f:
        for size in (1 << 16, 4096, 512, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC


def test_results_are_kept_when_the_filesystem_fills_during_the_run(tmp_path: Path) -> None:
    (tmp_path / "late.suite.yaml").write_text(LONG_SUITE)
    private = tmp_path / "tmp"
    private.mkdir()
    with tmpfs("1m") as out:
        proc = subprocess.Popen([*IOGATE, "run", "late.suite.yaml", "--json",
                                 str(out / "r.json")], cwd=tmp_path, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "TMPDIR": str(private),
                                     "IOGATE_TMPDIR": str(private)})
        assert proc.stderr is not None
        # The first case finished (its line; a warning may come before it): the second runs.
        first = next((line for line in proc.stderr if line.startswith("late.suite.yaml::")),
                     "")
        assert first.startswith("late.suite.yaml::first: passed"), first
        fill(out)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
        assert not (out / "r.json").exists()
    assert proc.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr
    assert f"the results file {out / 'r.json'} cannot be written: No space left on device" \
        in stderr, stderr
    [kept] = private.glob("iogate-results-*.json")
    assert f"the results are in {kept} instead" in stderr
    doc = json.loads(kept.read_text())
    # 'long' is there when the interrupt reached it running, not when it came before that.
    finished = [first.split(": ")[0], *re.findall(r"^(late\.suite\.yaml::\w+): ", stderr, re.M)]
    assert [c["id"] for c in doc["cases"]] == finished
    assert doc["cases"][0]["outcome"] == "passed"


# -- the pytest plugin -------------------------------------------------------------------------

def test_the_plugin_refuses_unusable_outputs_before_collecting(pytester: pytest.Pytester
                                                               ) -> None:
    (pytester.path / "out.suite.yaml").write_text(SUITE)
    device = char_device(pytester.path / "null")
    for args, words in [
        ([f"--iogate-json={device}"], ["--iogate-json", "not a regular file"]),
        (["--iogate-json=missing/r.json"], ["--iogate-json", "does not exist"]),
        (["--iogate-save-baseline=missing/b.json"], ["--iogate-save-baseline",
                                                     "does not exist"]),
        ([f"--iogate-html={device}"], ["--iogate-html", "not a regular file"]),
    ]:
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, (args, result.stderr.str())
        err = result.stderr.str()
        assert all(w in err for w in words), (args, err)
        assert "Traceback" not in err
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_the_plugin_keeps_results_the_filesystem_had_no_room_for(
        pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (pytester.path / "out.suite.yaml").write_text(SUITE)
    private = tmp_path / "private-tmp"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    with tmpfs("1m") as out:
        # Every case has run when the session finishes; the filesystem fills just then.
        pytester.makeconftest(f"""
import pytest
from pathlib import Path

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    with open(Path({str(out)!r}) / "filler", "wb", buffering=0) as f:
        for size in (1 << 16, 4096, 512, 1):
            try:
                while True:
                    f.write(b"\\0" * size)
            except OSError:
                pass
""")
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                               f"--iogate-json={out / 'r.json'}")
        assert not (out / "r.json").exists()
    out_text = result.stdout.str() + result.stderr.str()
    assert result.ret not in (0, pytest.ExitCode.USAGE_ERROR), out_text
    assert "No space left on device" in out_text
    [kept] = private.glob("iogate-results-*.json")
    assert f"the results are in {kept} instead" in out_text
    assert [c["outcome"] for c in json.loads(kept.read_text())["cases"]] == ["passed"] * 2
