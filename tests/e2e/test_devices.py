"""``iogate devices``: every block device with a size, and whether a run may write it, found by
the very checks a run makes (loop devices: blank, carrying a filesystem, mounted, read-only)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.e2e.test_safety import digest, loop_device, needs_loop

from iogate.devices import _present

IOGATE = [sys.executable, "-m", "iogate"]


def listed(dev: str) -> str:
    """The row of ``dev`` and the lines under it (a long verdict goes there)."""
    proc = subprocess.run([*IOGATE, "devices"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["device", "size", "model", "firmware", "writes"]
    assert max(len(line) for line in lines) <= 120
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == [dev])
    under = []
    for line in lines[at + 1:]:
        if not line.startswith("    "):
            break
        under.append(line)
    return " ".join(" ".join([lines[at], *under]).split())


@needs_loop
def test_each_device_says_whether_a_run_may_write_it(disk_dir: Path) -> None:
    with loop_device(disk_dir / "blank.img") as blank, \
            loop_device(disk_dir / "data.img") as data:
        subprocess.run(["mkfs.ext4", "-q", "-F", data], check=True) \
            if shutil.which("mkfs.ext4") else pytest.skip("needs mkfs.ext4")
        before = digest(blank), digest(data)
        row = listed(blank)
        assert "32MiB" in row
        assert row.endswith("blank: written only with --allow-destructive")
        assert listed(data).endswith("refused: carries data (ext4 signature)")
        # listing changed nothing on either device
        assert (digest(blank), digest(data)) == before
        mnt = disk_dir / "mnt"
        mnt.mkdir()
        if subprocess.run(["mount", data, str(mnt)]).returncode == 0:
            try:
                assert listed(data).endswith(
                    "refused: the device, a partition of it or a holder is mounted or in use")
            finally:
                subprocess.run(["umount", str(mnt)], check=False)


@needs_loop
def test_a_read_only_device_is_refused(disk_dir: Path) -> None:
    image = disk_dir / "ro.img"
    image.write_bytes(b"\0" * (8 << 20))
    dev = subprocess.run(["losetup", "-r", "-f", "--show", str(image)], capture_output=True,
                         text=True, check=True).stdout.strip()
    try:
        assert listed(dev).endswith("refused: read-only")
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)


def test_a_device_without_a_size_is_not_listed(tmp_path: Path) -> None:
    # an unattached loop device has a node in /dev and a size of 0 in sysfs
    names = sorted(p.name for p in Path("/dev").glob("loop[0-9]*"))[:3]
    if len(names) < 3:
        pytest.skip("needs three loop device nodes")
    for name, sectors, partition in zip(names, ("0", "2048", "4096"), (False, False, True),
                                        strict=True):
        (tmp_path / name).mkdir()
        (tmp_path / name / "size").write_text(sectors + "\n")
        if partition:
            (tmp_path / name / "partition").write_text("1\n")
    (tmp_path / "ghost0").mkdir()  # in sysfs, but without a node in /dev
    (tmp_path / "ghost0" / "size").write_text("2048\n")
    assert list(_present(tmp_path)) == [(f"/dev/{names[1]}", False, 2048 * 512),
                                        (f"/dev/{names[2]}", True, 4096 * 512)]
