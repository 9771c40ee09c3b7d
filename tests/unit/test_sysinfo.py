"""The first-party sysinfo plugin: host facts, mounts, and block devices found through sysfs."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.faults import FaultFS

from iogate import environment, hooks
from iogate_sysinfo import plugin as sysinfo
from iogate_sysinfo.plugin import Mount, block_device_facts, find_mount, parse_mountinfo

linux_only = pytest.mark.skipif(not Path("/proc/self/mountinfo").exists(),
                                reason="needs Linux /proc and /sys")


@pytest.fixture
def disk_dir() -> Iterator[Path]:
    """A temporary directory in /var/tmp, disk-backed on common systems (unlike /tmp)."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable")
    path = Path(tempfile.mkdtemp(prefix="iogate-sysinfo-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# -- this machine ------------------------------------------------------------------------------

@linux_only
def test_host_facts_of_this_machine() -> None:
    facts = sysinfo.host_facts()
    assert facts["kernel"] == platform.release()
    assert facts["cpu_count"] == os.cpu_count()
    assert isinstance(facts["memory_bytes"], int)
    assert facts["memory_bytes"] > 1 << 20
    assert isinstance(facts.get("cpu_model", ""), str)


@linux_only
def test_a_file_on_disk_has_a_filesystem_and_a_device(disk_dir: Path) -> None:
    data = disk_dir / "target.data"
    data.write_bytes(b"x")
    facts = sysinfo.environment(str(data))
    assert facts["target.path"] == str(data)
    assert facts["target.kind"] == "file"
    assert data.resolve().is_relative_to(str(facts["target.mount"]))
    if shutil.which("df"):  # an independent reading of the same mount table
        out = subprocess.run(["df", "--output=fstype,target", str(data)], capture_output=True,
                             text=True, check=True).stdout.splitlines()[-1].split(None, 1)
        assert [facts["target.fs"], facts["target.mount"]] == out
    st_dev = data.stat().st_dev
    if Path(f"/sys/dev/block/{os.major(st_dev)}:{os.minor(st_dev)}").exists():
        assert facts["target.device"] in os.listdir("/sys/block")
        assert facts["target.logical_block_size"] in (512, 1024, 2048, 4096)


@linux_only
def test_a_target_not_created_yet_is_described_by_its_directory(disk_dir: Path) -> None:
    existing = disk_dir / "a"
    existing.write_bytes(b"x")
    later = sysinfo.environment(str(disk_dir / "sub" / "b"))
    now = sysinfo.environment(str(existing))
    assert later["target.path"] == str(disk_dir / "sub" / "b")
    assert {k: v for k, v in later.items() if k != "target.path"} == \
        {k: v for k, v in now.items() if k != "target.path"}


@linux_only
def test_through_the_hook_on_a_fresh_manager(disk_dir: Path) -> None:
    pm = hooks.new_plugin_manager(load_entrypoints=False)
    pm.register(sysinfo)
    facts = environment.capture(str(disk_dir / "x"), pm=pm)
    assert facts["kernel"] == platform.release()
    assert "target.fs" in facts
    assert "iogate_version" in facts


def test_a_strange_target_still_gives_host_facts() -> None:
    facts = sysinfo.iogate_environment("bad\0path")
    assert str(facts["target.path"]).endswith("bad\0path")
    assert "kernel" in facts


def test_the_hook_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(target: str | None) -> dict[str, object]:
        raise RuntimeError("unexpected")

    monkeypatch.setattr(sysinfo, "environment", broken)
    assert sysinfo.iogate_environment("/x") == {}


def test_host_facts_from_a_fake_proc(tmp_path: Path) -> None:
    (tmp_path / "cpuinfo").write_text("processor\t: 0\nmodel name\t: Example CPU 3000\n"
                                      "processor\t: 1\nmodel name\t: Example CPU 3000\n")
    (tmp_path / "meminfo").write_text("MemTotal:       16384 kB\nMemFree: 1 kB\n")
    facts = sysinfo.host_facts(tmp_path)
    assert facts["cpu_model"] == "Example CPU 3000"
    assert facts["memory_bytes"] == 16384 * 1024
    assert "cpu_model" not in sysinfo.host_facts(tmp_path / "missing")
    assert "memory_bytes" not in sysinfo.host_facts(tmp_path / "missing")


def test_host_facts_follow_a_rewritten_proc_file(tmp_path: Path) -> None:
    # What a /proc tree said is kept between cases, but not past a change of its files.
    (tmp_path / "cpuinfo").write_text("model name\t: First CPU\n")
    (tmp_path / "meminfo").write_text("MemTotal:       1024 kB\n")
    assert sysinfo.host_facts(tmp_path)["cpu_model"] == "First CPU"
    (tmp_path / "cpuinfo").unlink()
    (tmp_path / "cpuinfo").write_text("model name\t: Second CPU, a longer name\n")
    (tmp_path / "meminfo").unlink()
    facts = sysinfo.host_facts(tmp_path)
    assert facts["cpu_model"] == "Second CPU, a longer name"
    assert "memory_bytes" not in facts


# -- mounts ------------------------------------------------------------------------------------

MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw
40 27 259:3 / /var/lib\\040data rw,relatime shared:5 master:1 - xfs /dev/nvme0n1p3 rw
41 27 0:45 / /srv rw - btrfs /dev/sda1 rw,subvol=/srv
42 27 259:2 /home /home rw - ext4 /dev/nvme0n1p2 rw
43 27 0:46 / /home rw - tmpfs tmpfs rw
garbage line
"""


def test_parse_mountinfo_reads_optional_fields_and_escapes() -> None:
    mounts = parse_mountinfo(MOUNTINFO)
    assert len(mounts) == 6  # the garbage line is skipped
    assert mounts[2] == Mount(259, 3, "/var/lib data", "xfs", "/dev/nvme0n1p3")


@pytest.mark.parametrize(("path", "dev", "mount_point", "fs"), [
    ("/var/lib data/f", (259, 3), "/var/lib data", "xfs"),
    ("/var/lib/f", (259, 2), "/", "ext4"),  # a prefix that is not a path component
    ("/srv/x", (0, 99), "/srv", "btrfs"),  # anonymous st_dev: deepest containing mount
    ("/home/u/f", (259, 2), "/home", "ext4"),  # the mount with the file's device wins
    ("/home/u/f", (0, 46), "/home", "tmpfs"),
])
def test_find_mount(path: str, dev: tuple[int, int], mount_point: str, fs: str) -> None:
    mount = find_mount(path, dev, parse_mountinfo(MOUNTINFO))
    assert mount is not None
    assert (mount.mount_point, mount.fs_type) == (mount_point, fs)


@given(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0xD7FF), min_size=1,
               max_size=20))
def test_escaped_mount_points_read_back(name: str) -> None:
    escaped = "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in "/" + name)
    mounts = parse_mountinfo(f"1 0 8:1 / {escaped} rw - ext4 /dev/sda1 rw\n")
    assert [m.mount_point for m in mounts] == ["/" + name]


# -- block devices in a fake sysfs -------------------------------------------------------------

def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _link(sysfs: Path, dev: str, target: Path) -> None:
    link = sysfs / "dev" / "block" / dev
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))


@pytest.fixture
def sysfs(tmp_path: Path) -> Path:
    """An NVMe namespace with two partitions, a SATA disk and a loop device."""
    root = tmp_path / "sys"
    ctrl = root / "devices/pci0000:00/0000:00:04.0/nvme/nvme0"
    for name, text in {"model": "Example NVMe SSD 1TB   ", "serial": "S123456789",
                       "firmware_rev": "2B2QEXM7"}.items():
        _write(ctrl / name, text)
    disk = ctrl / "nvme0n1"
    _write(disk / "size", "2000409264")
    _write(disk / "queue/scheduler", "[none] mq-deadline kyber")
    for name, text in {"rotational": "0", "logical_block_size": "512",
                       "physical_block_size": "4096", "nr_requests": "1023",
                       "max_sectors_kb": "128", "write_cache": "write back"}.items():
        _write(disk / "queue" / name, text)
    (disk / "device").symlink_to("..")  # a namespace's device is its controller
    for part, minor in (("nvme0n1p1", 1), ("nvme0n1p2", 2)):
        _write(disk / part / "partition", str(minor))
        _write(disk / part / "size", "1000")
        _link(root, f"259:{minor}", disk / part)
    _link(root, "259:0", disk)

    sda = root / "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda"
    for name, text in {"model": "Example HDD", "rev": "SN05", "vendor": "ATA     ",
                       "queue_depth": "32"}.items():
        _write(sda.parent.parent / name, text)
    (sda / "device").parent.mkdir(parents=True, exist_ok=True)
    (sda / "device").symlink_to("../..")
    _write(sda / "queue/scheduler", "mq-deadline [bfq] none")
    _write(sda / "queue/rotational", "1")
    _link(root, "8:0", sda)

    loop = root / "devices/virtual/block/loop0"
    _write(loop / "loop/backing_file", "/var/tmp/disk.img")
    _write(loop / "queue/scheduler", "none")
    _link(root, "7:0", loop)
    return root


def test_a_partition_resolves_to_its_nvme_disk(sysfs: Path) -> None:
    facts = block_device_facts(259, 2, sysfs)
    assert facts == {
        "target.device": "nvme0n1",
        "target.partition": "nvme0n1p2",
        "target.device_model": "Example NVMe SSD 1TB",
        "target.serial": "S123456789",
        "target.firmware": "2B2QEXM7",
        "target.size_bytes": 2000409264 * 512,
        "target.rotational": False,
        "target.logical_block_size": 512,
        "target.physical_block_size": 4096,
        "target.nr_requests": 1023,
        "target.max_sectors_kb": 128,
        "target.scheduler": "none",
        "target.write_cache": "write back",
    }


def test_the_whole_disk_is_its_own_device(sysfs: Path) -> None:
    facts = block_device_facts(259, 0, sysfs)
    assert facts["target.device"] == "nvme0n1"
    assert "target.partition" not in facts


def test_a_sata_disk(sysfs: Path) -> None:
    facts = block_device_facts(8, 0, sysfs)
    assert facts["target.device"] == "sda"
    assert facts["target.device_model"] == "Example HDD"
    assert facts["target.firmware"] == "SN05"
    assert facts["target.vendor"] == "ATA"
    assert facts["target.queue_depth"] == 32
    assert facts["target.scheduler"] == "bfq"
    assert facts["target.rotational"] is True
    assert "target.serial" not in facts


def test_a_loop_device_reports_its_backing_file(sysfs: Path) -> None:
    facts = block_device_facts(7, 0, sysfs)
    assert facts == {"target.device": "loop0", "target.backing_file": "/var/tmp/disk.img",
                     "target.scheduler": "none"}


def test_an_unknown_device_gives_no_facts(sysfs: Path, tmp_path: Path) -> None:
    assert block_device_facts(1, 99, sysfs) == {}
    assert block_device_facts(259, 2, tmp_path / "nowhere") == {}


def test_an_unreadable_attribute_is_left_out(sysfs: Path) -> None:
    model = sysfs / "devices/pci0000:00/0000:00:04.0/nvme/nvme0/model"
    model.unlink()
    model.mkdir()  # reading a directory fails
    assert "target.device_model" not in block_device_facts(259, 0, sysfs)


def test_a_file_on_a_fake_partition_gets_the_aliases(sysfs: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_bytes(b"x")
    dev = os.stat(data).st_dev
    proc = tmp_path / "proc"
    _write(proc / "self/mountinfo", f"30 1 {os.major(dev)}:{os.minor(dev)} / {tmp_path} rw"
           " - xfs /dev/nvme0n1p2 rw")
    # Point the fake sysfs's entry for the real st_dev at the fake partition.
    disk = sysfs / "devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1"
    real = sysfs / "dev/block" / f"{os.major(dev)}:{os.minor(dev)}"
    if real.is_symlink():
        real.unlink()
    _link(sysfs, f"{os.major(dev)}:{os.minor(dev)}", disk / "nvme0n1p1")
    facts = sysinfo.environment(str(data), proc=proc, sysfs=sysfs)
    assert facts["target.fs"] == "xfs"
    assert facts["target.mount"] == str(tmp_path)
    assert facts["target.mount_source"] == "/dev/nvme0n1p2"
    assert facts["target.partition"] == "nvme0n1p1"
    assert facts["device_model"] == facts["target.device_model"] == "Example NVMe SSD 1TB"
    assert facts["firmware"] == facts["target.firmware"] == "2B2QEXM7"


def test_a_target_on_a_vanished_mount_is_described_by_its_path_alone() -> None:
    # A FUSE daemon killed: every look at the mount fails with ENOTCONN. The facts must say
    # what they can (the path), never raise.
    with FaultFS() as fs:
        target = fs.path / "sub" / "data"
        fs.kill()
        facts = sysinfo.target_facts(str(target))
    assert facts == {"target.path": str(target)}
