"""verify, verify_backlog, verify_fatal and io_timeout: validation, where each rule is
reported, how defaults and precondition steps get them, and their lowering to the job spec."""

import json
import textwrap
from pathlib import Path

import pytest

from iogate.engine import native
from iogate.engine.session import job_struct
from iogate.errors import SuiteError
from iogate.lower import lower, lower_step
from iogate.spec import Case, load_suite
from iogate.spec.data import VERIFIERS
from iogate.spec.schema import json_schema


def write(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "s.suite.yaml"
    f.write_text(text)
    return f


def one_workload(body: str) -> str:
    """A suite whose single workload has the given extra lines (starting on line 5)."""
    return "suite: s\nworkloads:\n  - name: w\n    size: 1MiB\n" + textwrap.indent(
        textwrap.dedent(body), "    ")


def problems(tmp_path: Path, text: str) -> list[str]:
    f = write(tmp_path, text)
    with pytest.raises(SuiteError) as exc:
        load_suite(f, env={})
    return [str(p).replace(str(f), "F") for p in exc.value.problems]


def load_one(tmp_path: Path, body: str) -> Case:
    return load_suite(write(tmp_path, one_workload(body)), env={}).cases[0]


# -- good input and its lowering ------------------------------------------------------------

def test_verify_keys_lower_to_the_job_spec(tmp_path):
    case = load_one(tmp_path, "rw: randwrite\nbs: 8k\nverify: crc32c\nverify_backlog: 16\n"
                              "verify_fatal: true\nio_timeout: 2s\n")
    w = case.workload
    assert (w.verify, w.verify_backlog, w.verify_fatal, w.io_timeout) == (
        "crc32c", 16, True, 2 * 10**9)
    spec = lower(w, filenames=["/var/tmp/f"], seed=1)
    assert (spec.verify, spec.verify_backlog, spec.verify_fatal, spec.io_timeout_ns) == (
        "crc32c", 16, True, 2 * 10**9)
    c = job_struct(spec)
    assert (c.verify, c.verify_backlog, c.io_timeout_ns) == (
        native.VERIFY_CRC32C, 16, 2 * 10**9)
    assert c.flags & native.JOB_VERIFY_FATAL


def test_without_the_keys_nothing_is_verified_or_timed(tmp_path):
    spec = lower(load_one(tmp_path, "rw: randwrite\n").workload, filenames=["f"], seed=1)
    assert (spec.verify, spec.verify_backlog, spec.verify_fatal, spec.io_timeout_ns) == (
        "none", 0, False, 0)
    assert not job_struct(spec).flags & native.JOB_VERIFY_FATAL


@pytest.mark.parametrize(("written", "lowered", "code"), [
    ("crc32c", "crc32c", native.VERIFY_CRC32C),
    ("crc32c-intel", "crc32c", native.VERIFY_CRC32C),  # fio's name for the same checksum
    ("xxhash", "xxhash", native.VERIFY_XXH64),
    ("crc32", "crc32", native.VERIFY_CRC32),
    ("none", "none", native.VERIFY_NONE),
])
def test_each_checksum(tmp_path, written, lowered, code):
    spec = lower(load_one(tmp_path, f"rw: write\nverify: {written}\n").workload,
                 filenames=["f"], seed=1)
    assert spec.verify == lowered
    assert job_struct(spec).verify == code


@pytest.mark.parametrize(("text", "ns"), [("500ms", 5 * 10**8), ("2", 2 * 10**9),
                                      ("1s + 250ms", 125 * 10**7), ("10us", 10_000)])
def test_io_timeout_is_a_duration(tmp_path, text, ns):
    spec = lower(load_one(tmp_path, f"rw: randread\nio_timeout: {text}\n").workload,
                 filenames=["f"], seed=1)
    assert spec.io_timeout_ns == ns


def test_defaults_and_precondition_steps_take_the_keys_like_other_job_keys(tmp_path):
    text = textwrap.dedent("""\
        suite: s
        defaults:
          size: 1m
          io_timeout: 3s
          verify: xxhash
        workloads:
          - name: fill-then-check
            rw: randwrite
            precondition:
              - {rw: write, verify: crc32, verify_fatal: true}
              - {rw: randread, verify: none}
          - name: own-timeout
            rw: write
            io_timeout: 1s
            verify: none
    """)
    a, b = load_suite(write(tmp_path, text), env={}).cases
    assert (a.workload.verify, a.workload.io_timeout) == ("xxhash", 3 * 10**9)
    fill, read = a.preconditions
    step = lower_step(fill, filenames=["f"], seed=1)
    assert (step.verify, step.verify_fatal, step.io_timeout_ns) == ("crc32", True, 0)
    assert lower_step(read, filenames=["f"], seed=1).verify == "none"
    assert (b.workload.verify, b.workload.io_timeout) == ("none", 10**9)


def test_verify_with_the_header_sized_block_and_a_whole_block_alignment(tmp_path):
    w = load_one(tmp_path, "rw: randwrite\nbs: 64\nblockalign: 64\nverify: crc32c\n").workload
    assert (w.bs.write, w.blockalign and w.blockalign.write) == (64, 64)
    # bssplit and bsrange that come down to one size are one size.
    one = load_one(tmp_path, "rw: randwrite\nbsrange: 8k-8k\nverify: crc32c\n").workload
    assert lower(one, filenames=["f"], seed=1).bs_write == 8192


# -- refusals, each at the key to change ----------------------------------------------------

@pytest.mark.parametrize(("body", "expected"), [
    ("rw: randwrite\nverify: sha3-256\n",
     "F:6:13: workloads[0].verify: verify 'sha3-256' is not supported; use crc32c, crc32, "
     "crc64, xxhash, xxh32, xxh64, md5, sha1, sha256, sha512, meta or none"),
    ("rw: randwrite\nverify: pattern\n",
     "F:6:13: workloads[0].verify: verify 'pattern' is not supported; use crc32c, crc32, "
     "crc64, xxhash, xxh32, xxh64, md5, sha1, sha256, sha512, meta or none"),
    ("rw: randwrite\nverify: crc33\n",
     "F:6:13: workloads[0].verify: unknown verify 'crc33'; use crc32c, crc32, crc64, xxhash, "
     "xxh32, xxh64, md5, sha1, sha256, sha512, meta or none"),
    ("rw: randwrite\nverify: sha512\nbs: 64\n",
     "F:7:5: workloads[0].bs: verify needs a write block size of at least 128 bytes (its "
     "header and sha512 digest) and a multiple of 8, got 64; e.g. 'bs: 4k'"),
    ("rw: randread\nverify: crc32c\n",
     "F:6:5: workloads[0].verify: verify checks the blocks a job writes: it needs rw write, "
     "randwrite, rw or randrw, not randread (it reads back what the job wrote in the same "
     "run)"),
    ("verify: crc32c\nrw: rw\nbs: 4k,8k\n",
     "F:7:5: workloads[0].bs: verify of rw, a sequential mix, needs reads of the write block "
     "size (8192) too, so that every write starts on a block; or use randrw"),
    ("rw: randwrite\nverify: crc32c\nbssplit: 4k/50:8k/50\n",
     "F:7:5: workloads[0].bssplit: verify needs one block size for writes; bssplit gives "
     "several: use bs"),
    ("rw: write\nverify: crc32c\nbsrange: 4k-16k\n",
     "F:7:5: workloads[0].bsrange: verify needs one block size for writes; bsrange gives "
     "several: use bs"),
    ("rw: randwrite\nverify: crc32c\nbs: 32\n",
     "F:7:5: workloads[0].bs: verify needs a write block size of at least 64 bytes (its "
     "header) and a multiple of 8, got 32; e.g. 'bs: 4k'"),
    ("rw: randwrite\nverify: crc32c\nbs: 100\n",
     "F:7:5: workloads[0].bs: verify needs a write block size of at least 64 bytes (its "
     "header) and a multiple of 8, got 100; e.g. 'bs: 4k'"),
    ("rw: randwrite\nverify: crc32c\nnumjobs: 4\n",
     "F:7:5: workloads[0].numjobs: verify needs numjobs 1: 4 threads would overwrite each "
     "other's blocks; raise iodepth for more load"),
    ("rw: randwrite\nverify: xxhash\nioengine: null\n",
     "F:7:5: workloads[0].ioengine: verify needs a file; the null engine writes nothing"),
    ("rw: randwrite\nverify: crc32\nblockalign: 512\n",
     "F:7:5: workloads[0].blockalign: verify keeps one block at each multiple of the block "
     "size: blockalign (512) must be the block size (4096), or left out"),
    ("rw: randwrite\nverify_backlog: 8\n",
     "F:6:5: workloads[0].verify_backlog: verify_backlog needs verify, e.g. 'verify: crc32c'"),
    ("rw: randwrite\nverify: none\nverify_fatal: true\n",
     "F:7:5: workloads[0].verify_fatal: verify_fatal needs verify, e.g. 'verify: crc32c'"),
    ("rw: randwrite\nverify: crc32c\nverify_backlog: 0\n",
     "F:7:21: workloads[0].verify_backlog: must be at least 1, got 0"),
    ("rw: randwrite\nverify: crc32c\nverify_fatal: yes\n",
     "F:7:19: workloads[0].verify_fatal: expected true or false, got the string 'yes'"),
    ("rw: randread\nio_timeout: 0\n",
     "F:6:17: workloads[0].io_timeout: must be greater than 0, got 0"),
    ("rw: randread\nio_timeout: -1s\n",
     "F:6:17: workloads[0].io_timeout: '-1s': a duration cannot be negative"),
    ("rw: randread\nio_timeout: 5 parsecs\n",
     "F:6:17: workloads[0].io_timeout: unknown duration unit 'parsecs'"),
])
def test_refusals(tmp_path, body, expected):
    got = problems(tmp_path, one_workload(body))
    assert len(got) == 1, got
    assert got[0].startswith(expected), got


def test_verify_from_the_defaults_blames_the_workload_key_it_conflicts_with(tmp_path):
    text = ("suite: s\ndefaults:\n  size: 1m\n  verify: crc32c\nworkloads:\n"
            "  - name: writer\n    rw: write\n  - name: reader\n    rw: read\n")
    assert problems(tmp_path, text) == [
        "F:9:5: workloads[1].rw: verify checks the blocks a job writes: it needs rw write, "
        "randwrite, rw or randrw, not read (it reads back what the job wrote in the same run)"]


@pytest.mark.parametrize("mix", ["rw: randrw\nbs: 4k,8k\n", "rw: rw\nbs: 8k\n"])
def test_a_mix_verifies_the_blocks_it_writes(tmp_path, mix):
    case = load_one(tmp_path, "verify: crc32c\n" + mix)
    assert case.workload.verify == "crc32c"
    assert case.workload.rw in ("randrw", "rw")
    spec = lower(case.workload, filenames=["/var/tmp/x"], seed=1)
    assert (spec.verify, spec.rw) == ("crc32c", case.workload.rw)


def test_a_precondition_step_is_checked_on_its_own(tmp_path):
    text = one_workload("rw: randread\nprecondition:\n  - {rw: write, verify: crc32c, "
                        "numjobs: 2}\n")
    assert problems(tmp_path, text) == [
        "F:7:37: workloads[0].precondition[0].numjobs: verify needs numjobs 1: 2 threads "
        "would overwrite each other's blocks; raise iodepth for more load"]


def test_schema_knows_the_keys():
    defs = json_schema()["$defs"]
    workload = defs["WorkloadEntry"]["properties"]
    assert "verify" in workload
    assert "io_timeout" in workload
    verify = json.dumps(workload["verify"])
    assert all(name in verify for name in VERIFIERS)
    assert "sha3" not in verify
    assert "description" in workload["verify_backlog"]
