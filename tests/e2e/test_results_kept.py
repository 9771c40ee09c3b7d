"""A run's results are never lost to what happens around it: a second run given the same
results file is refused while the first writes it; the results file's directory (or the
journal beside it) removed during the run loses no finished case, the results going to the
first of $TMPDIR, the scratch directory, the current directory and $HOME that takes them,
and stderr names that file. Provoked for real: two processes, directories removed while the
run goes on, directories made read-only in a mount namespace of the run's own."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.faults import require_root

IOGATE = [sys.executable, "-m", "iogate"]

# Short cases, then one that runs long enough for something to happen meanwhile (at a
# modest rate, leaving the CPUs to what happens).
SUITE = """\
suite: kept
defaults:
  ioengine: null
  rw: read
  size: 1MiB
workloads:
""" + "".join(f"  - name: c{n}\n" for n in range(1, 9)) + """\
  - name: long
    runtime: {long}
    time_based: true
    rate_iops: 1000
"""
SHORT = [f"kept.suite.yaml::c{n}" for n in range(1, 9)]
EVERY = [*SHORT, "kept.suite.yaml::long"]
FINISHED = re.compile(r"^(kept\.suite\.yaml::\w+): (passed|failed|error|interrupted)\b",
                      re.M)


def start(run: Path, *args: str, env: dict[str, str] | None = None,
          command: Sequence[str] = (), long: str = "3s") -> subprocess.Popen[str]:
    (run / "kept.suite.yaml").write_text(SUITE.replace("{long}", long))
    return subprocess.Popen([*command, *IOGATE, "run", "kept.suite.yaml", *args], cwd=run,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def until_finished(proc: subprocess.Popen[str], last: str) -> str:
    """stderr of ``proc`` up to the line saying case ``last`` finished (the next runs)."""
    assert proc.stderr is not None
    seen = ""
    for line in proc.stderr:
        seen += line
        if line.startswith(f"{last}: "):
            return seen
    raise AssertionError(f"{last} never finished: {seen}{proc.communicate()}")


def finished(stderr: str) -> list[str]:
    return [cid for cid, _ in FINISHED.findall(stderr)]


def test_a_second_run_given_the_same_results_file_is_refused(tmp_path: Path) -> None:
    # The first run is in its long case (a minute) while the second starts; it is
    # interrupted once the second was refused.
    first = start(tmp_path, "--json", "r.json", long="60s")
    said = until_finished(first, SHORT[-1])
    second = subprocess.run([*IOGATE, "run", "kept.suite.yaml", "--json", "r.json"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    first.send_signal(signal.SIGINT)
    _, rest = first.communicate(timeout=120)
    assert second.returncode == 2, second.stderr
    assert (f"--json r.json: another iogate run (pid {first.pid}) is writing results to "
            "r.json") in second.stderr
    assert "Traceback" not in second.stderr
    assert not finished(second.stderr)
    assert first.returncode == 130, said + rest
    cases = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert [c["id"] for c in cases] == finished(said + rest) == EVERY
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.suite.yaml", "r.json"]


def test_the_results_directory_removed_during_the_run_loses_no_case(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    private = tmp_path / "tmp"
    private.mkdir()
    proc = start(tmp_path, "--json", "out/r.json", env={"TMPDIR": str(private)})
    said = until_finished(proc, SHORT[-1])
    shutil.rmtree(tmp_path / "out")
    _, rest = proc.communicate(timeout=120)
    stderr = said + rest
    assert proc.returncode == 3, stderr
    assert "Traceback" not in stderr, stderr
    assert ".journal" not in stderr, stderr
    [kept] = private.glob("iogate-results-*.json")
    assert f"iogate: the results are in {kept} instead" in stderr, stderr
    cases = json.loads(kept.read_text())["cases"]
    assert [c["id"] for c in cases] == finished(stderr) == EVERY


def test_the_journal_removed_during_the_run_loses_no_case(tmp_path: Path) -> None:
    proc = start(tmp_path, "--json", "r.json")
    said = until_finished(proc, SHORT[-1])
    (tmp_path / "r.json.journal").unlink()
    _, rest = proc.communicate(timeout=120)
    assert proc.returncode == 0, said + rest
    cases = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert [c["id"] for c in cases] == finished(said + rest) == EVERY


# The directories that cannot take the results, each made read-only for the run alone (in a
# mount namespace of its own), and the one that gets them (None: none does).
@pytest.mark.parametrize(("refusing", "taking"), [
    (["tmp"], "scratch"),
    (["tmp", "scratch", "/var/tmp", "/tmp"], "cwd"),
    (["tmp", "scratch", "/var/tmp", "/tmp", "cwd"], "home"),
    (["tmp", "scratch", "/var/tmp", "/tmp", "cwd", "home"], None),
])
def test_results_go_to_the_first_directory_that_takes_them(tmp_path: Path, refusing: list[str],
                                                           taking: str | None) -> None:
    require_root()
    if shutil.which("unshare") is None:
        pytest.skip("unshare is missing")
    places = {name: tmp_path / name for name in ("tmp", "scratch", "cwd", "home", "out")}
    for place in places.values():
        place.mkdir()
    (places["out"] / "sub").mkdir()
    # The private namespace first lets go of the filesystems other tests mounted under
    # /tmp (lazily, here only): holding them would keep them alive after those tests unmount
    # them, and a remount there would find the same, shut-down filesystem. Then each
    # directory a mount of its own, so that it stays as it is when /tmp above it is made
    # read-only; then the refusing ones made read-only.
    script = ("awk '$2 ~ \"^/tmp/pytest-of-\" {print $2}' /proc/self/mounts "
              "| sort -r | xargs -r -n1 umount -l; ")
    script += "".join(f'mount --bind "{p}" "{p}" && '
                      for p in ("/var/tmp", "/tmp", *places.values()))
    script += "".join(f'mount -o remount,bind,ro "{places.get(name, name)}" && '
                      for name in refusing)
    proc = start(places["cwd"], "--json", str(places["out"] / "sub" / "r.json"),
                 env={"TMPDIR": str(places["tmp"]), "IOGATE_TMPDIR": str(places["scratch"]),
                      "HOME": str(places["home"])},
                 command=["unshare", "--mount", "--propagation", "private", "sh", "-c",
                          script + 'exec "$@"', "sh"])
    said = until_finished(proc, SHORT[-1])
    shutil.rmtree(places["out"] / "sub")  # the results file cannot be written now
    _, rest = proc.communicate(timeout=120)
    stderr = said + rest
    assert proc.returncode == 3, stderr
    assert "Traceback" not in stderr, stderr
    assert ".journal" not in stderr, stderr
    kept = [k for place in places.values() for k in place.glob("iogate-results-*")]
    if taking is None:
        assert not kept, stderr
        assert "iogate: the results are lost" in stderr, stderr
        return
    assert [k.parent for k in kept] == [places[taking]], stderr
    assert f"iogate: the results are in {kept[0]} instead" in stderr, stderr
    assert [c["id"] for c in json.loads(kept[0].read_text())["cases"]] == finished(stderr)


def test_a_pytest_session_given_the_results_file_of_a_run_is_refused(
        pytester: pytest.Pytester) -> None:
    run = start(pytester.path, "--json", "r.json", long="60s")
    said = until_finished(run, SHORT[-1])
    session = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--iogate-json=r.json")
    run.send_signal(signal.SIGINT)
    _, rest = run.communicate(timeout=120)
    err = session.stdout.str() + session.stderr.str()
    assert session.ret == pytest.ExitCode.USAGE_ERROR, err
    assert (f"--iogate-json r.json: another iogate run (pid {run.pid}) is writing results "
            "to r.json") in err
    assert "Traceback" not in err
    assert "passed" not in session.stdout.str()
    assert run.returncode == 130, said + rest
    cases = json.loads((pytester.path / "r.json").read_text())["cases"]
    assert [c["id"] for c in cases] == finished(said + rest) == EVERY
