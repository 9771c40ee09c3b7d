"""The self-contained wheel (scripts/wheel.sh): tagged manylinux, carrying the libraries the
engine links against, installed with pip into a fresh virtual environment, and running
io_uring, libaio, crc32c (ISA-L) and xxhash cases while the system's own copies of those
libraries cannot be loaded (each bound over with /dev/null in a mount namespace of its own)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from iogate.engine.native import library_path

REPO = Path(__file__).resolve().parents[2]
VENDORED = ("liburing", "libaio", "libisal", "libxxhash", "libcrypto")

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("mount") is None,
    reason="needs root, unshare and mount (a mount namespace)")

SUITE = """\
suite: wheel
defaults:
  size: 4MiB
  direct: true
  filename: {target}
workloads:
  - name: uring
    ioengine: io_uring
    rw: randread
    iodepth: 8
    expect:
      read.ios: "== 1024"
  - name: aio
    ioengine: libaio
    rw: randread
    iodepth: 8
    expect:
      read.ios: "== 1024"
  - name: crc32c
    ioengine: io_uring
    rw: write
    verify: crc32c
  - name: xxhash
    ioengine: libaio
    rw: write
    verify: xxhash
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheelhouse")
    proc = subprocess.run(["bash", str(REPO / "scripts/wheel.sh"), sys.executable, str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [built] = out.glob("iogate-*.whl")
    return built


def system_copies() -> dict[str, str]:
    """The files of the system's libraries the engine of this checkout loads, by name."""
    proc = subprocess.run(["ldd", library_path()], capture_output=True, text=True, check=True)
    found = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"\s*(lib[a-z0-9_]+)[-.][^ ]* => (\S+)", line)
        if m and m.group(1) in VENDORED:
            found[m.group(1)] = os.path.realpath(m.group(2))
    return found


def test_the_wheel_is_manylinux_and_carries_the_engines_libraries(wheel: Path) -> None:
    assert re.fullmatch(r"iogate-[\d.]+-py3-none-manylinux_\d+_\d+_x86_64\.whl", wheel.name)
    names = zipfile.ZipFile(wheel).namelist()
    assert "iogate/libiogate.so" in names
    carried = {Path(n).name.split("-")[0] for n in names if n.startswith("iogate.libs/")}
    assert carried >= set(VENDORED) & set(system_copies())


def test_the_wheel_runs_without_the_systems_libraries(wheel: Path, tmp_path: Path,
                                                       disk_dir: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    installed = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "-q",
                                str(wheel)], capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stderr
    hidden = system_copies()
    assert set(hidden) >= {"liburing", "libaio", "libisal", "libxxhash"}, hidden
    (tmp_path / "w.suite.yaml").write_text(SUITE.format(target=disk_dir / "w.data"))
    binds = "".join(f"mount --bind /dev/null {path} && " for path in hidden.values())
    probe = "import ctypes, sys\ntry:\n    ctypes.CDLL(sys.argv[1])\nexcept OSError:\n" \
            "    sys.exit(0)\nsys.exit(1)\n"
    (tmp_path / "probe.py").write_text(probe)
    checks = "".join(f"{venv}/bin/python probe.py {path} && " for path in hidden.values())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "IOGATE_LIB")}
    proc = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         f"{binds}{checks}{venv}/bin/iogate run w.suite.yaml --json r.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [c["outcome"] for c in doc["cases"]] == ["passed"] * 4
    # the wheel's own iogate ran, not this checkout's
    where = subprocess.run([f"{venv}/bin/python", "-c", "import iogate; print(iogate.__file__)"],
                           capture_output=True, text=True, env=env, check=True).stdout
    assert where.startswith(str(venv))
