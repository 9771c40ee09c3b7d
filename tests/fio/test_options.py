"""Job specs as fio options, and job files that fio reads back exactly as written."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from iogate.engine import catalog
from iogate.fio.options import (
    FLAG_KEYS,
    FORBIDDEN,
    KNOWN_KEYS,
    MAX_LINE_BYTES,
    VALUE_FORMS,
    FioUnsupported,
    forbidden,
    job_options,
    render_jobfile,
    section_name,
    split_filenames,
)
from iogate.job import BsEntry, JobSpec, Zone

KiB = 1024
MS = 1_000_000
S = 1_000_000_000
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def spec(**kw: object) -> JobSpec:
    base = dict(rw="randread", iodepth=8, size=64 * KiB * KiB, runtime_ns=2 * S,
                time_based=True, direct=True, rwmixread=100, filename="/var/tmp/t.data")
    base.update(kw)
    return JobSpec(**base)  # type: ignore[arg-type]


def options(s: JobSpec) -> dict[str, str]:
    out = dict(job_options(s))
    assert len(out) == len(job_options(s)), "an option appears twice"
    return out


def unsupported(s: JobSpec) -> str:
    with pytest.raises(FioUnsupported) as info:
        job_options(s)
    return str(info.value)


# -- what each JobSpec field becomes ------------------------------------------------------

def test_a_plain_job_is_written_in_bytes_and_exact_times() -> None:
    o = options(spec(ramp_ns=250_000, offset=8 * KiB))
    assert o["ioengine"] == "io_uring"
    assert o["rw"] == "randread"
    assert o["bs"] == "4096"
    assert o["size"] == str(64 * KiB * KiB)
    assert o["offset"] == "8192"
    assert o["runtime"] == "2s"
    assert o["ramp_time"] == "250us"
    assert o["direct"] == "1"
    assert o["iodepth"] == "8"
    assert o["numjobs"] == "1"
    assert o["time_based"] == ""
    assert o["norandommap"] == ""
    assert o["randseed"] == "4660"
    assert "rwmixread" not in o  # not a mixed job


@pytest.mark.parametrize(("ns", "text"), [(1500 * MS, "1500ms"), (3 * S, "3s"),
                                           (1_000, "1us"), (2_500_000, "2500us")])
def test_times_carry_an_explicit_unit_fio_reads_exactly(ns: int, text: str) -> None:
    assert options(spec(runtime_ns=ns))["runtime"] == text


def test_a_time_below_a_microsecond_is_refused() -> None:
    # fio has no 'ns' unit: runtime=1500ns would silently be 1500 microseconds.
    assert "whole microseconds" in unsupported(spec(runtime_ns=1500))


def test_a_filling_job_is_fio_fill_device_on_a_file_fio_grows_itself() -> None:
    o = options(spec(rw="write", time_based=False, runtime_ns=0, fill=True, no_layout=True))
    assert o["fill_device"] == "1"
    assert o["rw"] == "write"
    assert "no_layout" in unsupported(spec(rw="write", no_layout=True))


def test_mixed_jobs_give_every_per_direction_value() -> None:
    o = options(spec(rw="randrw", rwmixread=70, bs_read=4 * KiB, bs_write=64 * KiB,
                     rate_iops_read=70, rate_iops_write=30, rate_process="poisson"))
    assert o["rwmixread"] == "70"
    assert o["bs"] == "4096,65536"
    assert o["rate_iops"] == "70,30"
    assert o["rate_process"] == "poisson"


def test_rates_are_divided_among_the_threads_fio_limits_each_of() -> None:
    o = options(spec(numjobs=4, rate_iops_read=1000))
    assert o["rate_iops"] == "250"
    assert "does not divide evenly" in unsupported(spec(numjobs=3, rate_iops_read=100))


def test_a_direction_with_both_rates_keeps_the_stricter() -> None:
    # fio applies rate (bytes) and ignores rate_iops on a direction that has both.
    o = options(spec(rate_iops_read=100, rate_bytes_read=1_000_000))  # 409600 B/s < 1 MB/s
    assert o["rate_iops"] == "100"
    assert "rate" not in o
    o = options(spec(rate_iops_read=1000, rate_bytes_read=1_000_000))
    assert o["rate"] == "1000000"
    assert "rate_iops" not in o


def test_rate_iops_over_several_block_sizes_is_refused() -> None:
    split = [BsEntry(4 * KiB, 4 * KiB, 500_000), BsEntry(64 * KiB, 64 * KiB, 500_000)]
    assert "smallest block size" in unsupported(spec(bssplit_read=split, rate_iops_read=10))
    assert options(spec(bssplit_read=split, rate_bytes_read=10 * KiB * KiB))["rate"] \
        == str(10 * KiB * KiB)


def test_bssplit_weights_become_whole_percents() -> None:
    split = [BsEntry(1 * KiB, 1 * KiB, 100_000), BsEntry(4 * KiB, 4 * KiB, 800_000),
             BsEntry(16 * KiB, 16 * KiB, 100_000)]
    assert options(spec(bssplit_read=split))["bssplit"] == "1024/10:4096/80:16384/10"
    mixed = options(spec(rw="randrw", rwmixread=50, bssplit_read=split, bs_write=8 * KiB))
    assert mixed["bssplit"] == "1024/10:4096/80:16384/10,8192/100"
    assert "bs" not in mixed


def test_bssplit_shares_that_are_not_whole_percents_are_refused() -> None:
    # fio reads each share with atoi: 33.3 would become 33.
    thirds = [BsEntry(4 * KiB, 4 * KiB, 333_334), BsEntry(8 * KiB, 8 * KiB, 333_333),
              BsEntry(16 * KiB, 16 * KiB, 333_333)]
    assert "whole percents" in unsupported(spec(bssplit_read=thirds))


def test_a_range_is_bsrange_and_alignment_is_explicit() -> None:
    o = options(spec(bssplit_read=[BsEntry(KiB, 16 * KiB, 1_000_000)],
                     blockalign_read=8 * KiB))
    assert o["bsrange"] == "1024-16384"
    assert o["blockalign"] == "8192"
    o = options(spec(rw="randrw", rwmixread=50, bs_write=64 * KiB, blockalign_write=128 * KiB))
    assert o["blockalign"] == "4096,131072"  # the read side at its default, said explicitly
    both = [BsEntry(KiB, 4 * KiB, 500_000), BsEntry(8 * KiB, 8 * KiB, 500_000)]
    assert "range inside a bssplit" in unsupported(spec(bssplit_read=both))


def test_file_names_are_separated_and_colons_escaped() -> None:
    names = ["/data/a:b", "/data/plain", "/data/c\\:d"]
    o = options(spec(filenames=names))
    assert o["filename"] == "/data/a\\:b:/data/plain:/data/c\\\\:d"
    assert split_filenames(o["filename"]) == names


@pytest.mark.parametrize(("name", "why"), [
    ("/tmp/x\n[global]\nexec_prerun=touch /tmp/p", "control character"),
    ("/tmp/x\rexec_prerun=x", "control character"), ("/tmp/x\u2028y", "control character"),
    ("/tmp/x;exec_prerun=x", "comment"), ("/tmp/x#y", "comment"),
    ("/tmp/${HOME}", "expands"), ("/tmp/$ncpus", "expands"), (" /tmp/x", "blank"),
    ("/tmp/x ", "blank"), ("-", "standard input"),
])
def test_file_names_fio_would_read_differently_are_refused(name: str, why: str) -> None:
    assert why in unsupported(spec(filename=name))


def test_a_trailing_backslash_before_another_name_is_refused() -> None:
    assert "backslash" in unsupported(spec(filenames=["/tmp/a\\", "/tmp/b"]))
    assert options(spec(filenames=["/tmp/b", "/tmp/a\\"]))["filename"] == "/tmp/b:/tmp/a\\"


@pytest.mark.parametrize(("layout", "expected"), [
    ("data", ("overwrite", "1")), ("none", ("fallocate", "none")),
    ("keep_size", ("fallocate", "keep")), ("truncate", ("fallocate", "truncate")),
    ("posix", ("fallocate", "posix"))])
def test_how_a_written_file_is_prepared(layout, expected) -> None:
    o = options(spec(rw="randwrite", write_layout=layout))
    assert o[expected[0]] == expected[1]


def test_data_options_and_the_pattern_in_hex() -> None:
    o = options(spec(rw="write", compress_pct=50, compress_chunk=4 * KiB,
                     pattern=b"\xde\xad\xbe\xef", refill=True, dedupe_pct=10))
    assert o["buffer_compress_percentage"] == "50"
    assert o["buffer_compress_chunk"] == "4096"
    assert o["buffer_pattern"] == "0xdeadbeef"
    assert o["dedupe_percentage"] == "10"
    assert o["refill_buffers"] == ""
    assert o["scramble_buffers"] == "0"
    # a file only written is prepared as fio's defaults prepare it: nothing to write
    assert "overwrite" not in o
    assert "fallocate" not in o
    # A pattern without a compressible part is never written by iogate: not by fio either.
    assert "buffer_pattern" not in options(spec(rw="write", pattern=b"\x01"))
    assert options(spec(rw="write", compress_pct=20))["buffer_compress_chunk"] == "512"
    assert "zero_buffers" in options(spec(rw="randwrite", zero_buffers=True))


def test_distributions() -> None:
    assert options(spec(dist="zipf", dist_param=1.2))["random_distribution"] == "zipf:1.2"
    # No exponent: plain digits, as fio's parser expects.
    assert options(spec(dist="pareto", dist_param=1e-05))["random_distribution"] \
        == "pareto:0.00001"
    zones = [Zone(800_000, 100_000), Zone(200_000, 900_000)]
    assert options(spec(dist="zoned", zones=zones))["random_distribution"] \
        == "zoned:80/10:20/90"
    assert "whole percents" in unsupported(
        spec(dist="zoned", zones=[Zone(605_000, 100_000), Zone(395_000, 900_000)]))
    assert "not a normal distribution" in unsupported(spec(dist="normal", dist_param=10))
    assert "random_distribution" not in options(spec(rw="read", dist="zipf", dist_param=1.2))


def test_pacing_and_syncs() -> None:
    o = options(spec(rw="randwrite", thinktime_ns=3 * MS, sync_kind="fdatasync",
                     sync_every=32))
    assert o["thinktime"] == "3ms"
    assert o["thinktime_blocks"] == "1"
    assert o["fdatasync"] == "32"
    assert "fsync" not in o


def test_verify_names_and_what_fio_cannot_verify() -> None:
    o = options(spec(rw="write", time_based=False, runtime_ns=0, verify="crc32c",
                     verify_backlog=64, verify_fatal=True))
    assert (o["verify"], o["verify_backlog"], o["verify_fatal"]) == ("crc32c", "64", "1")
    assert options(spec(rw="write", time_based=False, verify="crc32"))["verify"] == "crc32"
    assert "XXH32" in unsupported(spec(rw="write", time_based=False, verify="xxhash"))
    assert "never start" in unsupported(spec(rw="write", verify="crc32c"))


def test_every_unsupported_feature_is_named_at_once() -> None:
    message = unsupported(spec(rw="randwrite", io_timeout_ns=S, test_crash=True, no_layout=True,
                               seed=2**64 - 1, runtime_ns=10))
    for feature in ("io_timeout", "test_crash", "no_layout", "randseed", "runtime"):
        assert feature in message


def test_an_engine_fio_should_not_load_is_refused() -> None:
    assert "engine 'exec'" in unsupported(spec(engine="exec"))
    assert "engine" in unsupported(spec(engine="external:/tmp/evil.so"))


def test_the_null_engine_needs_no_file_and_drops_no_cache() -> None:
    o = options(spec(engine="null", filename="", invalidate=False))
    assert "filename" not in o
    assert o["invalidate"] == "0"
    assert "without a file" in unsupported(spec(filename=""))


# -- rendering ----------------------------------------------------------------------------

def render_one(key: str, value: str, name: str = "job") -> str:
    return render_jobfile([(name, [("rw", "read"), (key, value)])])


@pytest.mark.parametrize("key", [*sorted(k for k in FORBIDDEN if "=" not in k),
                                 "include", "includefile", "INCLUDE"])
def test_forbidden_keys_are_never_written(key: str) -> None:
    with pytest.raises(ValueError, match="never written"):
        render_one(key, "/bin/sh -c 'touch /tmp/p'")


@pytest.mark.parametrize("engine", ["exec", "external", "external:/tmp/evil.so",
                                    "/tmp/evil.so", "libaio2", "io_uring "])
def test_only_the_five_engines_are_written(engine: str) -> None:
    with pytest.raises(ValueError, match=r"^\[job\] 'ioengine': never written: ioengine "):
        render_one("ioengine", engine)
    assert forbidden("ioengine", engine) is not None


@pytest.mark.parametrize("value", [
    "4096\n[global]", "4096\nexec_prerun=touch /tmp/p", "4096\r", "40\x0096", "4096 ",
    " 4096", "4096;x", "4096#x", "${SIZE}", "$mb_memory", "4096\u2028exec_prerun=x",
    "1 rw=write", "[global]", "0x10", "-1", "",
])
def test_hostile_values_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match=r"^\[job\] 'size': value "):
        render_one("size", value)


@pytest.mark.parametrize(("key", "value"), [
    ("buffer_pattern", "'/etc/passwd'"),  # fio reads a quoted pattern from a file
    ("buffer_pattern", '"abc"'), ("verify", "crc7"), ("rw", "discard"), ("time_based", "1"),
    ("stonewall", "x"), ("name", "x"), ("description", "x"), ("filename", "-"),
    ("filename", "/tmp/a:-"), ("random_distribution", "zipf:1.2,zipf:2"),
])
def test_values_of_the_wrong_form_are_refused(key: str, value: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(f"[job] '{key}'")):
        render_one(key, value)


@pytest.mark.parametrize("name", ["a]b", "a[b", "a\nb", "a b", "", "global", "global-reads",
                                  "GLOBAL", "a;b", "a$b", "x" * 121, "é"])
def test_hostile_section_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match=r"^section name "):
        render_jobfile([(name, [("rw", "read")])])


def test_section_names_are_made_safe_and_unambiguous() -> None:
    assert section_name("qd[bs:4k-iodepth:32]") == "qd(bs=4k-iodepth=32)"
    assert section_name("global") == "job-global"
    assert section_name("a\n[global]\nexec_prerun=x") == "a_(global)_exec_prerun=x"
    long = section_name("w" * 300)
    assert len(long) == 120
    assert long != section_name("w" * 299)
    for raw in ("a]b", "global", "x" * 500, "a b;c$d", ""):
        render_jobfile([(section_name(raw), [("rw", "read")])])  # never raises


def test_duplicate_sections_and_overlong_lines_are_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        render_jobfile([("a", [("rw", "read")]), ("a", [("rw", "read")])])
    with pytest.raises(ValueError, match="bytes"):
        render_one("filename", "/" + "x" * MAX_LINE_BYTES)


def test_comments_stay_comments() -> None:
    text = render_jobfile([("job", [("rw", "read")])],
                          "a\n[global]\nexec_prerun=touch /tmp/p\r\nb\x00\u2028" + "z" * 5000,
                          section_comments={"job": "expect\nexec_postrun=x"})
    lines = text.splitlines()
    assert [line for line in lines if line and not line.startswith(";")] == ["[job]", "rw=read"]
    assert max(len(line.encode()) for line in lines) < MAX_LINE_BYTES


def test_a_rendered_file_lists_sections_in_order() -> None:
    text = render_jobfile([("one", [("stonewall", ""), ("rw", "read"), ("bs", "4096")]),
                           ("two", [("rw", "randwrite")])], "header")
    assert text == ("; header\n\n[one]\nstonewall\nrw=read\nbs=4096\n\n[two]\n"
                    "rw=randwrite\n")


# -- reading a job file as fio does -------------------------------------------------------

FIO_LINE_BUFFER = 4096  # the smallest of fio's line buffers (fgets reads one byte less)


def read_as_fio(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """Sections and options as fio's job file reader sees them: lines split at '\\n' only
    and cut at its line buffer, comments, blanks stripped, a value cut at ';' or '#'; '$'
    marks a value fio would expand."""
    raw_lines: list[str] = []
    for raw in text.encode().split(b"\n"):
        while len(raw) > FIO_LINE_BUFFER - 2:  # fgets: the rest is another line
            raw_lines.append(raw[:FIO_LINE_BUFFER - 2].decode(errors="replace"))
            raw = raw[FIO_LINE_BUFFER - 2:]
        raw_lines.append(raw.decode(errors="replace"))
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    for line in raw_lines:
        line = line.strip(" \t\r\v\f")
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            sections.append((line[1:line.index("]")] if "]" in line else line[1:], []))
            continue
        key, _, value = line.partition("=")
        value = re.split(r"[;#]", value, maxsplit=1)[0].strip()
        if "$" in value:
            value += " <expanded by fio>"
        sections[-1][1].append((key.strip(), value))
    return sections


HOSTILE = st.text(alphabet=st.sampled_from(
    [*"ab:/\\ .-_=,[]$;#{}0123456789x", "\n", "\r", "\x00", "\t", "\u2028", "é"]),
    max_size=24)
ALL_KEYS = sorted(KNOWN_KEYS | {k for k in FORBIDDEN if "=" not in k} | {"includefile"})


@st.composite
def options_drawn(draw: st.DrawFn) -> tuple[str, str]:
    """An option: mostly of the form its key takes, else anything at all."""
    key = draw(st.sampled_from(ALL_KEYS))
    form = VALUE_FORMS.get(key)
    if form is None or draw(st.integers(0, 9)) == 0:
        return key, draw(st.one_of(HOSTILE, st.sampled_from(["", "exec", "external:/x.so"])))
    return key, "" if form == "" else draw(st.from_regex(form, fullmatch=True))


@settings(max_examples=300)
@given(sections=st.lists(st.tuples(
    st.one_of(st.from_regex(r"[a-z0-9_.()=-]{1,12}", fullmatch=True),
              st.text(alphabet="abc[]_-. \nglobal", max_size=12)),
    st.lists(options_drawn(), max_size=6)), max_size=4),
    comment=HOSTILE)
def test_whatever_renders_reads_back_exactly(sections: list, comment: str) -> None:
    try:
        text = render_jobfile(sections, comment)
    except ValueError:
        event("refused")
        return
    event("rendered")
    assert read_as_fio(text) == [(name, list(opts)) for name, opts in sections]
    headers = [line for line in text.split("\n") if line.startswith("[")]
    assert len(headers) == len(sections)
    for line in text.split("\n"):
        key = line.strip().partition("=")[0]
        assert key not in FORBIDDEN
        assert not key.lower().startswith("include")
        assert not line.strip().lower().startswith("[global")


SAFE_NAME = st.from_regex(r"/[a-z0-9:\\ \[\]é._-]{0,10}[a-z]", fullmatch=True)


@st.composite
def job_specs(draw: st.DrawFn) -> JobSpec:
    """Job specs as lowering makes them, with now and then something fio cannot run."""
    rw = draw(st.sampled_from(["read", "write", "randread", "randwrite", "rw", "randrw"]))
    sizes = st.sampled_from([512, 4 * KiB, 8 * KiB, 64 * KiB])

    def table() -> list[BsEntry]:
        n = draw(st.sampled_from([0, 0, 1, 2, 3]))
        if n == 1:  # a range
            lo = draw(sizes)
            return [BsEntry(lo, lo * draw(st.integers(1, 4)), 1_000_000)]
        percents = [100 // n] * n if n else []
        if percents:
            percents[0] += 100 - sum(percents)
        return [BsEntry(b, b, p * 10_000) for b, p in zip(
            draw(st.lists(sizes, min_size=n, max_size=n, unique=True)), percents, strict=False)]

    names = draw(st.lists(st.one_of(SAFE_NAME, SAFE_NAME, SAFE_NAME, HOSTILE), min_size=1,
                          max_size=3))
    rare = st.sampled_from([False] * 9 + [True])  # true about one time in ten
    return spec(
        engine=draw(st.sampled_from(catalog.names())), rw=rw,
        bs_read=draw(sizes), bs_write=draw(sizes), numjobs=draw(st.integers(1, 4)),
        iodepth=draw(st.integers(1, 64)), size=draw(st.integers(1, 2**40)),
        offset=draw(st.integers(0, 2**30)), runtime_ns=draw(st.integers(0, 10)) * MS,
        ramp_ns=1500 if draw(rare) else draw(st.sampled_from([0, 2 * S])),
        time_based=draw(st.booleans()), rwmixread=draw(st.integers(0, 100)),
        filename=names[0], filenames=names if len(names) > 1 else [],
        seed=draw(st.integers(0, 2**64 - 1 if draw(rare) else 2**63 - 1)),
        bssplit_read=table(), bssplit_write=table(),
        rate_iops_read=draw(st.sampled_from([0, 0, 100, 1200])),
        rate_bytes_write=draw(st.sampled_from([0, 1 << 20])),
        dist=draw(st.sampled_from(["uniform", "zipf", "pareto", "zoned"])), dist_param=0.25,
        zones=[Zone(500_000, 250_000), Zone(500_000, 750_000)],
        thinktime_ns=draw(st.sampled_from([0, 5_000, 2 * MS])),
        compress_pct=draw(st.integers(0, 100)), pattern=draw(st.binary(max_size=8)),
        dedupe_pct=draw(st.integers(0, 100)), refill=draw(st.booleans()),
        verify="xxhash" if draw(rare) else draw(st.sampled_from(["none", "crc32c"])),
        io_timeout_ns=S if draw(rare) else 0)


@settings(max_examples=300)
@given(job=job_specs())
def test_job_options_always_render_and_read_back(job: JobSpec) -> None:
    try:
        opts = job_options(job)
    except FioUnsupported:
        event("unsupported")
        return
    event("supported")
    text = render_jobfile([("job", opts)])  # never a ValueError: job_options checked it
    assert read_as_fio(text) == [("job", opts)]
    assert all(k in KNOWN_KEYS for k, _ in opts)
    assert all((v == "") == (k in FLAG_KEYS) for k, v in opts)
    if job.filenames or job.filename:
        assert split_filenames(dict(opts)["filename"]) == job.files()


# -- fio itself ---------------------------------------------------------------------------

@needs_fio
def test_fio_reads_file_names_as_written(tmp_path: Path) -> None:
    names = [str(tmp_path / n) for n in ("a:b", "sp ace", "[x]", "ü", "c\\:d", "e\\f")]
    opts = job_options(spec(engine="null", filenames=names, runtime_ns=0, time_based=False))
    job = tmp_path / "names.fio"
    job.write_text(render_jobfile([("names", opts)]))
    out = subprocess.run(["fio", "--parse-only", "--debug=file", str(job)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    added = [line.split("add file ", 1)[1] for line in out.stdout.splitlines()
             if "add file " in line]
    assert added == names


def test_flow_control_is_written_as_fios_with_its_sleep_in_microseconds() -> None:
    o = options(spec(flow_weight=8, plain={"flow_id": 3, "flow_sleep_ns": 1_000_000}))
    assert (o["flow"], o["flow_id"], o["flow_sleep"]) == ("8", "3", "1000")
    assert "flow" not in options(spec())
    assert "whole microseconds" in unsupported(spec(flow_weight=1, plain={"flow_sleep_ns": 1500}))
