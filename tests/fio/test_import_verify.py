"""Importing fio's verification options: every verify kind of real job files, the options on
how fio keeps and reports verification state, verify_pattern, verify_interval, and
do_verify=0 with a later job that reads the blocks back; each kept in meaning, with a comment
in the generated suite where iogate does it differently, or refused with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.fio.importer import import_jobfile
from iogate.fio.options import FioUnsupported, job_options
from iogate.job import JobSpec
from iogate.lower import lower
from iogate.spec import load_suite_text

JOBS = Path(__file__).parent / "jobs"


def imported(body: str) -> tuple[dict[str, JobSpec], str, str]:
    """The job file's workloads lowered, by name, its suite text, and that text's comments
    joined into one line (the renderer wraps them)."""
    text = import_jobfile("v.fio", "[global]\nfilename=/var/tmp/v.dat\nsize=1m\n" + body)
    suite = load_suite_text(text, "v.fio", {})
    specs = {c.id: lower(c.workload, filenames=c.workload.filenames or ["/var/tmp/x"], seed=1)
             for c in suite.cases}
    comments = " ".join(line.strip().lstrip("#").strip() for line in text.splitlines()
                        if line.strip().startswith("#"))
    return specs, text, comments


def problems(body: str) -> list[str]:
    with pytest.raises(SuiteError) as info:
        import_jobfile("v.fio", "[global]\nfilename=/var/tmp/v.dat\nsize=1m\n" + body)
    return [str(p) for p in info.value.problems]


# -- the kinds ----------------------------------------------------------------------------

@pytest.mark.parametrize(("fio", "iogate"), [
    ("md5", "md5"), ("sha1", "sha1"), ("sha256", "sha256"), ("sha512", "sha512"),
    ("crc64", "crc64"), ("crc32c", "crc32c"), ("crc32c-intel", "crc32c"), ("crc32", "crc32"),
    ("xxhash", "xxh32"), ("meta", "meta"),
])
def test_every_verify_kind_of_fio_is_kept(fio: str, iogate: str) -> None:
    specs, text, _ = imported(f"[w]\nrw=randwrite\nverify={fio}\n")
    assert specs["w"].verify == iogate
    assert f"verify: {iogate}\n" in text


def test_fio_xxhash_is_xxh32_and_says_so() -> None:
    _, text, comments = imported("[w]\nrw=write\nverify=xxhash\n")
    assert "verify: xxh32" in text
    assert "fio's xxhash is XXH32, iogate's xxh32" in comments


@pytest.mark.parametrize("kind", ["sha3-256", "sha3-512", "pattern", "crc16", "crc7"])
def test_kinds_iogate_does_not_compute_are_refused(kind: str) -> None:
    (p,) = problems(f"[w]\nrw=write\nverify={kind}\n")
    assert f"verify={kind}: verify '{kind}' is not supported: iogate checks every written " \
           "block with verify: md5, sha1, sha256, sha512, crc64" in p


# -- state and reporting options -------------------------------------------------------------

@pytest.mark.parametrize(("option", "comment"), [
    ("verify_state_save=1", "fio saves the written-block state at exit for a later "
     "verify_state_load; iogate keeps it in memory for the read-back of the same run"),
    ("verify_state_save=0", "fio saves the written-block state at exit for a later "
     "verify_state_load; iogate keeps it in memory for the read-back of the same run"),
    ("verify_dump=1", "fio dumps the blocks that fail verification to files; iogate records "
     "each failure with its offset, kind and generation in the results"),
    ("verify_async=4", "fio verifies in threads of their own (a speed setting); iogate "
     "verifies in the job's workers"),
])
def test_state_options_are_kept_with_what_iogate_does(option: str, comment: str) -> None:
    specs, _, comments = imported(f"[w]\nrw=write\nverify=md5\n{option}\n")
    assert specs["w"].verify == "md5"
    assert f"{option} (line 7): {comment}" in comments


@pytest.mark.parametrize("option", ["verify_state_save=1", "verify_dump=1", "verify_async=2",
                                    "verify_interval=512", "do_verify=0"])
def test_state_options_without_verify_are_ignored_as_fio_does(option: str) -> None:
    specs, _, comments = imported(f"[w]\nrw=write\n{option}\n")
    assert specs["w"].verify == "none"
    assert f"{option} (line 6): no verify: fio ignores it" in comments


@pytest.mark.parametrize(("option", "reason"), [
    ("verify_state_load=1", "it loads the written-block state a previous run saved; iogate "
     "checks the blocks written in the same run"),
    ("verify_only=1", "it reads back blocks without writing them; iogate checks the blocks a "
     "job wrote in the same run"),
])
def test_options_that_need_another_run_are_refused(option: str, reason: str) -> None:
    (p,) = problems(f"[w]\nrw=write\nverify=crc32c\n{option}\n")
    assert f"{option}: {reason}" in p


def test_verify_only_at_fio_default_is_accepted() -> None:
    specs, _, comments = imported("[w]\nrw=write\nverify=crc32c\nverify_only=0\n")
    assert specs["w"].verify == "crc32c"
    assert "verify_only=0 (line 7): fio's default" in comments


# -- verify_interval -------------------------------------------------------------------------

@pytest.mark.parametrize("interval", ["512", "4k", "8k", "64k"])
def test_an_interval_of_whole_sectors_or_blocks_is_accepted(interval: str) -> None:
    specs, _, comments = imported(f"[w]\nrw=write\nbs=8k\nverify=crc64\n"
                                  f"verify_interval={interval}\n")
    assert specs["w"].verify == "crc64"
    assert f"verify_interval={interval} (line 8): iogate checks every 512-byte sector's stamp " \
           "and the whole block's checksum" in comments


def test_an_interval_within_a_sector_is_refused() -> None:
    (p,) = problems("[w]\nrw=write\nbs=4k\nverify=crc32c\nverify_interval=100\n")
    assert "verify_interval=100: iogate checks every 512-byte sector's stamp and the whole " \
           "block's checksum; an interval that is a multiple of 512 (or the block size) " \
           "keeps fio's meaning" in p


# -- verify_pattern ----------------------------------------------------------------------------

def test_verify_pattern_is_the_written_data_and_the_kind_is_kept() -> None:
    specs, text, comments = imported("[w]\nrw=write\nverify=sha256\n"
                                     "verify_pattern=0xaa555aa5\n")
    spec = specs["w"]
    assert (spec.verify, spec.pattern, spec.compress_pct) == ("sha256", b"\xaa\x55\x5a\xa5",
                                                              100)
    assert 'buffer_pattern: "0xaa555aa5"' in text
    assert "every byte from the pattern, as fio's verify_pattern writes it" in comments
    assert "the blocks hold verify_pattern (buffer_pattern) and the checksum covers it" \
        in comments


def test_verify_pattern_without_verify_checks_with_crc32c() -> None:
    specs, _, comments = imported("[w]\nrw=write\nverify_pattern=0x5a\n")
    assert (specs["w"].verify, specs["w"].pattern) == ("crc32c", b"\x5a")
    assert "fio's verify_pattern without verify checks the pattern itself; iogate checks the " \
           "block's crc32c" in comments


def test_verify_pattern_with_meta_says_the_data_is_not_checked() -> None:
    _, _, comments = imported("[w]\nrw=write\nverify=meta\nverify_pattern=0x5a\n")
    assert "iogate checks the header, the sector stamps and no data with meta" in comments


def test_verify_pattern_and_buffer_pattern_are_refused_together() -> None:
    (p,) = problems("[w]\nrw=write\nverify=crc32c\nbuffer_pattern=0x11\n"
                    "verify_pattern=0x22\n")
    assert "verify_pattern=0x22: fio writes the verify pattern in place of buffer_pattern" in p


# -- do_verify=0 and a later read-back ---------------------------------------------------------

def test_do_verify_0_alone_writes_without_verify() -> None:
    specs, text, comments = imported("[w]\nrw=write\nverify=crc32c\ndo_verify=0\n")
    assert specs["w"].verify == "none"
    assert "verify:" not in text
    assert "do_verify=0 (line 7): fio writes verifiable blocks but reads none back in this " \
           "job; iogate verifies in the job that writes: no verify here" in comments


def test_a_later_read_job_moves_the_check_onto_the_writer() -> None:
    specs, text, comments = imported("verify=md5\n[w]\nrw=write\ndo_verify=0\n"
                                     "[r]\nstonewall\nrw=read\n")
    assert specs["w"].verify == "md5"
    assert specs["r"].verify == "none"
    assert text.count("verify: md5") == 1
    assert "fio reads these blocks back in job [r] (do_verify=0 here); iogate reads them back " \
           "at the end of this job" in comments
    assert "verify=md5 (line 4): fio checks here the blocks [w] wrote; iogate checked them at " \
           "the end of w: this job reads them unchecked" in comments


def test_a_read_job_with_verify_and_no_writer_is_refused() -> None:
    (p,) = problems("[r]\nrw=read\nverify=crc32c\n")
    assert "verify checks the blocks a job writes" in p


# -- fio's own examples ------------------------------------------------------------------------

def test_surface_scan_fills_then_reads_back(tmp_path: Path) -> None:
    job = tmp_path / "surface-scan.fio"
    job.write_text((JOBS / "surface-scan.fio").read_text()
                   .replace("datafile.tmp", str(tmp_path / "datafile.tmp")))
    text = import_jobfile(job)
    assert "fill_device writes until the filesystem is full" in text
    suite = load_suite_text(text, job, {})
    w = {c.id: c.workload for c in suite.cases}
    assert w["write-phase"].fill_device
    assert w["write-phase"].size is None
    # the write phase verifies what the read phase read back in fio
    assert w["write-phase"].verify == "meta"
    assert w["verify-phase"].verify is None
    assert w["write-phase"].buffer_pattern == b"\xaa\x55\x5a\xa5"


def test_atomic_verify_fails_only_on_atomic_and_the_unknown_option() -> None:
    with pytest.raises(SuiteError) as info:
        import_jobfile(JOBS / "atomic-verify.fio")
    found = [str(p) for p in info.value.problems]
    assert len(found) == 2, found
    assert "atomic=1: fio's atomic is not supported" in found[0]
    assert "unknown fio option 'verify_write_sequence'" in found[1]



# -- and back to fio -----------------------------------------------------------------------------

@pytest.mark.parametrize(("iogate", "fio"), [
    ("md5", "md5"), ("sha1", "sha1"), ("sha256", "sha256"), ("sha512", "sha512"),
    ("crc64", "crc64"), ("crc32c", "crc32c"), ("crc32", "crc32"), ("xxh32", "xxhash"),
    ("meta", "meta"),
])
def test_every_kind_fio_has_is_exported_under_fio_name(iogate: str, fio: str) -> None:
    spec = JobSpec(rw="write", size=1 << 20, filename="/var/tmp/t.data", verify=iogate)
    assert dict(job_options(spec))["verify"] == fio


@pytest.mark.parametrize("kind", ["xxhash", "xxh64"])
def test_xxh64_is_not_exported(kind: str) -> None:
    spec = JobSpec(rw="write", size=1 << 20, filename="/var/tmp/t.data", verify=kind)
    with pytest.raises(FioUnsupported, match="fio's verify=xxhash is XXH32, iogate's xxh32"):
        job_options(spec)
