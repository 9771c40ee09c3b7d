"""Every checksum kind of verify through the real engine: md5, sha1, sha256, sha512 (the
whole digest kept after the header), crc64, xxh32, xxh64 (also called xxhash), crc32c, crc32
and meta (no data checksum: the header and the sector stamps).

A clean run of each writes and reads back every block without a failure; a torn write (the
fault-injection shim writes only the first half of one pwrite(2) and acknowledges it all,
over a file of random bytes) is caught by each as a torn block; a block size too small for
a kind's digest is refused, naming the smallest one.
"""

from __future__ import annotations

import pytest
from tests.engine.test_verify import BLOCKS, BS, only_failure, run_child, spec, target

from iogate.engine.session import run
from iogate.errors import EngineError

KINDS = ["crc32c", "crc32", "xxhash", "xxh64", "xxh32", "crc64", "md5", "sha1", "sha256",
         "sha512", "meta"]
SMALLEST = {"md5": 80, "sha1": 88, "sha256": 96, "sha512": 128}


@pytest.mark.parametrize("backlog", [0, 4])
@pytest.mark.parametrize("kind", KINDS)
def test_a_clean_run_of_every_kind_checks_every_write(disk_dir, kind, backlog):
    result = run([spec(disk_dir / "data.bin", size=32 * BS, verify=kind,
                       verify_backlog=backlog)])
    v = result.jobs[0].verify
    assert v is not None
    assert v.failures == 0
    assert v.records == []
    assert v.blocks_written == v.blocks_checked == 32


@pytest.mark.parametrize("kind", KINDS)
def test_a_torn_write_is_caught_by_every_kind(tmp_path, kind):
    path = target(tmp_path)
    out = run_child(path, dict(op="write", mode="torn", after=3, count=1), verify=kind)
    v = out["verify"]
    assert out["write_ios"] == BLOCKS
    assert out["write_errors"] == 0  # acknowledged
    f = only_failure(v)
    assert f.kind == "torn"
    assert v.by_kind["torn"] == 1
    assert f.offset == 3 * BS
    assert f.found_seq == f.expected_seq == 4  # the header of the write is there


@pytest.mark.parametrize(("kind", "smallest"), sorted(SMALLEST.items()))
def test_a_block_too_small_for_the_digest_is_refused(disk_dir, kind, smallest):
    with pytest.raises(EngineError, match=f">= {smallest} with verify, got {smallest - 8}"):
        run([spec(disk_dir / "data.bin", verify=kind, bs_read=smallest - 8,
                  bs_write=smallest - 8, size=(smallest - 8) * 16)])
    v = run([spec(disk_dir / "data.bin", verify=kind, bs_read=smallest, bs_write=smallest,
                  size=smallest * 16)]).jobs[0].verify
    assert v is not None
    assert v.failures == 0
    assert v.blocks_checked == 16
