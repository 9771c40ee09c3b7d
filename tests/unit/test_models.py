"""Suite validation end to end: load_suite on files, every bad input with its location."""

import json
import textwrap
from pathlib import Path

import pytest

from iogate.engine import catalog
from iogate.errors import SuiteError
from iogate.expect import Expectation
from iogate.spec import Case, LoadedSuite, load_suite, validate_paths
from iogate.spec.blocks import BlockSizes
from iogate.spec.models import Workload
from iogate.spec.schema import json_schema

KiB, MiB = 1 << 10, 1 << 20


def write(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "s.suite.yaml"
    f.write_text(textwrap.dedent(text))
    return f


def problems(tmp_path: Path, text: str, env=None) -> list[str]:
    """Every problem line, with the file name shortened to 'F'."""
    f = write(tmp_path, text)
    with pytest.raises(SuiteError) as exc:
        load_suite(f, env=env or {})
    return [str(p).replace(str(f), "F") for p in exc.value.problems]


def one_workload(body: str) -> str:
    """A suite whose single workload has the given extra lines (starting on line 5)."""
    return "suite: s\nworkloads:\n  - name: w\n    size: 1MiB\n" + textwrap.indent(
        textwrap.dedent(body), "    ")


GOOD = """\
suite: smoke
description: quick checks
defaults:
  size: ${SIZE:-64MiB}
  numjobs: ${ncpus}
  direct: true
workloads:
  - name: randread-4k
    rw: randread
    bs: 4k
    iodepth: 32
    runtime: 10s
    time_based: true
    expect:
      read.iops: ">= 250k"
      read.clat.p99: "<= 1.2ms"
      read.clat.p99.9: "<= 5ms"
  - name: mixed
    rw: readwrite
    bs: 4k,64k
    size: 8m
    direct: false
    expect:
      write.bw: ">= 100MiB/s"
  - name: per-direction
    rw: randrw
    rwmixread: 70
    bs: {read: 8k, write: 16KiB}
    ioengine: psync
"""


def test_good_suite(tmp_path):
    f = write(tmp_path, GOOD)
    suite = load_suite(f, env={"ncpus": "3"})
    assert isinstance(suite, LoadedSuite)
    assert (suite.name, suite.path, suite.description) == ("smoke", f, "quick checks")
    a, b, c = suite.cases
    assert all(isinstance(x, Case) for x in suite.cases)
    assert [x.id for x in suite.cases] == ["randread-4k", "mixed", "per-direction"]
    assert [x.line for x in suite.cases] == [8, 18, 25]
    assert a.suite_name == "smoke"
    assert a.path == f
    wa = a.workload
    assert (wa.rw, wa.bs, wa.iodepth, wa.numjobs, wa.size) == (
        "randread", BlockSizes(read=4096, write=4096), 32, 3, 64 * MiB)
    assert (wa.runtime, wa.time_based, wa.direct, wa.ioengine) == (10 * 10**9, True, True,
                                                                   "io_uring")
    assert wa.rwmixread is None
    assert [e.metric.text for e in a.expectations] == ["read.iops", "read.clat.p99",
                                                       "read.clat.p99.9"]
    assert all(isinstance(e, Expectation) for e in a.expectations)
    assert a.source_lines[16] == '      read.clat.p99: "<= 1.2ms"'
    wb = b.workload
    assert (wb.rw, wb.rwmixread, wb.bs, wb.size, wb.direct) == (
        "rw", 50, BlockSizes(read=4 * KiB, write=64 * KiB), 8 * MiB, False)
    wc = c.workload
    assert (wc.rwmixread, wc.bs, wc.ioengine, wc.iodepth) == (
        70, BlockSizes(read=8 * KiB, write=16 * KiB), "psync", 1)
    assert c.expectations == []
    assert c.source_lines == {}


def test_bare_null_engine_is_the_null_engine(tmp_path):
    # The loader keeps the bare word null a string, so fio's spelling of the engine works.
    text = ("suite: s\ndefaults:\n  ioengine: psync\nworkloads:\n"
            "  - name: a\n    size: 1m\n    ioengine: null\n  - name: b\n    size: 1m\n")
    suite = load_suite(write(tmp_path, text), env={})
    assert [c.workload.ioengine for c in suite.cases] == ["null", "psync"]


def test_empty_engine_is_an_error_not_the_null_engine(tmp_path):
    text = "suite: s\nworkloads:\n  - name: a\n    size: 1m\n    ioengine:\n"
    with pytest.raises(SuiteError) as info:
        load_suite(write(tmp_path, text), env={})
    assert "s.suite.yaml:5:" in str(info.value)
    assert "workloads[0].ioengine" in str(info.value)


def test_env_overrides_default(tmp_path):
    suite = load_suite(write(tmp_path, GOOD), env={"SIZE": "2GiB"})
    assert suite.cases[0].workload.size == 2 << 30


def test_workload_defaults():
    w = Workload.model_validate({"name": "x", "size": "1m"})
    assert (w.ioengine, w.rw, w.bs, w.iodepth, w.numjobs, w.offset, w.runtime, w.time_based,
            w.ramp_time, w.direct, w.rwmixread, w.expect, w.filename) == (
        "io_uring", "read", BlockSizes(read=4096, write=4096), 1, 1, 0, None, False, 0, False,
        None, {}, None)
    dumped = w.model_dump(mode="json")
    assert dumped["bs"] == {"read": 4096, "write": 4096}
    assert dumped["size"] == MiB


# -- every bad input, with its location ----------------------------------------------------

@pytest.mark.parametrize(("body", "expected"), [
    ("iodepht: 4\n", "F:5:5: workloads[0].iodepht: unknown key 'iodepht'; did you mean 'iodepth'?"),
    ("bogus: 1\n", "F:5:5: workloads[0].bogus: unknown key 'bogus'; valid keys are: filename,"),
    ('iodepth: "32"\n', "F:5:14: workloads[0].iodepth: expected an integer, got the string '32' "
                        "(remove the quotes)"),
    ("direct: on\n", "F:5:13: workloads[0].direct: expected true or false, got the string 'on' "
                     "(only true and false are booleans)"),
    ("time_based: yes\n", "F:5:17: workloads[0].time_based: expected true or false, got the "
                          "string 'yes'"),
    ("offset: 10Q\n", "F:5:13: workloads[0].offset: unknown size unit 'Q': use one of B, k/KiB"),
    ("bs: 4MB\n", "F:5:9: workloads[0].bs: ambiguous unit 'MB': write '4MiB' (4194304 bytes) "
                  "or '4000000'"),
    ("runtime: -5\n", "F:5:14: workloads[0].runtime: -5: a duration cannot be negative"),
    ("runtime: 0\n", "F:5:14: workloads[0].runtime: must be greater than 0, got 0"),
    ("numjobs: 0\n", "F:5:14: workloads[0].numjobs: must be at least 1, got 0"),
    ("iodepth: -1\n", "F:5:14: workloads[0].iodepth: must be at least 1, got -1"),
    ("iodepth: 2.5\n", "F:5:14: workloads[0].iodepth: expected an integer, got the number 2.5"),
    ("rwmixread: 101\nrw: rw\n", "F:5:16: workloads[0].rwmixread: must be at most 100, got 101"),
    ("rwmixread: 30\nrw: randread\n", "F:5:5: workloads[0].rwmixread: rwmixread applies only "
                                      "to rw and randrw, not to randread"),
    ('filename: "x\\0y"\n', "F:5:15: workloads[0].filename: filename contains a NUL byte"),
    ('filename: ""\n', "F:5:15: workloads[0].filename: filename must not be empty"),
    ("ramp_time: 1:30\n", "F:5:16: workloads[0].ramp_time: '1:30' looks like minutes:seconds; "
                          "write a unit instead, e.g. '90s'"),
    ("offset: 0777\n", "F:5:13: workloads[0].offset: '0777' has a leading zero; write the number "
                       "without it"),
    ("iodepth: 0777\n", "F:5:14: workloads[0].iodepth: expected an integer, got the string "
                        "'0777' (a leading zero makes it text"),
    ("ioengine: sync\niodepth: 4\n", "F:6:5: workloads[0].iodepth: sync is synchronous: "
                                     "iodepth must be 1"),
    ("rw: discard\n", "F:5:9: workloads[0].rw: expected one of 'read', 'write'"),
    ("ioengine: psync\niodepth: 8\n", "F:6:5: workloads[0].iodepth: psync is synchronous: "
                                      "iodepth must be 1; use io_uring, libaio or posixaio "
                                      "for queue depth"),
    ("direct: true\nbs: 1000\n", "F:6:5: workloads[0].bs: direct I/O needs block sizes that are "
                                 "a multiple of 512 bytes; read bs is 1000"),
    ("direct: true\noffset: 100\n", "F:6:5: workloads[0].offset: direct I/O needs an offset that "
                                    "is a multiple of 512 bytes, got 100"),
    ("time_based: true\n", "F:5:5: workloads[0].time_based: time_based needs a runtime"),
    ("bs: 4k,8k,16k\n", "F:5:9: workloads[0].bs: '4k,8k,16k': give at most two block sizes"),
    ("bs: 0\n", "F:5:9: workloads[0].bs: a block size must be greater than 0"),
    ("bs: {read: 4k, writ: 8k}\n", "F:5:20: workloads[0].bs.writ: unknown key 'writ'; did you "
                                   "mean 'write'?"),
    ("bs: 2MiB\n", "F:4:5: workloads[0].size: size (1MiB) is smaller than the block size (2MiB)"),
    ("expect:\n  read.clat.p99: '<= 250k'\n", "F:6:22: workloads[0].expect.read.clat.p99: '250k' "
     "is a count, but read.clat.p99 is a latency; write e.g. '<= 1.2ms'"),
    ("expect:\n  read.clatt.p99: '<= 1ms'\n", "F:6:23: workloads[0].expect.read.clatt.p99: "
     "unknown metric 'read.clatt.p99'"),
    ("expect:\n  read.iops: 250000\n", "F:6:18: workloads[0].expect.read.iops: 250000 is not a "
     "comparison: write a comparison like '>= 250k' (quoted)"),
    ("expect: fast\n", "F:5:13: workloads[0].expect: expected a mapping, got the string 'fast'"),
    ("offset: ${OFF}\n", "F:5:13: workloads[0].offset: variable 'OFF' is not set; set it or write "
                          "${OFF:-default}"),
    ("filename: ${DEV:?point DEV at a scratch device}\n",
     "F:5:15: workloads[0].filename: DEV: point DEV at a scratch device"),
    ("iodepth: 1\niodepth: 2\n", "F:6:5: workloads[0].iodepth: duplicate key 'iodepth' (first "
                                 "defined on line 5)"),
])
def test_bad_workload(tmp_path, body, expected):
    got = problems(tmp_path, one_workload(body))
    assert len(got) == 1, got
    assert got[0].startswith(expected), got


@pytest.mark.parametrize(("written", "said"), [
    ("windowsaio", "ioengine 'windowsaio' is not supported; use "),
    ("spdk", "ioengine 'spdk' is not supported; use "),
    ("5", "expected an engine: "),
])
def test_unknown_engine_names_every_engine_of_the_catalog(tmp_path, written, said):
    got = problems(tmp_path, one_workload(f"ioengine: {written}\n"))
    assert len(got) == 1, got
    assert got[0].startswith(f"F:5:15: workloads[0].ioengine: {said}"), got
    for engine in catalog.engines():  # each by name; the queued ones said to be queued
        assert f" {engine.name}" in got[0]
        if engine.queued and engine.does_io:
            assert got[0].index(f" {engine.name}") < got[0].index(" (queued)")


def test_name_problems(tmp_path):
    text = "suite: s\nworkloads:\n  - name: a b\n    size: 1m\n  - size: 1m\n"
    assert problems(tmp_path, text) == [
        "F:3:11: workloads[0].name: 'a b' is not a valid name: use letters, digits, '_', '.' "
        "and '-' only",
        "F:5:5: workloads[1].name: name is required",
    ]


def test_size_is_required_without_a_file_to_take_it_from(tmp_path):
    assert problems(tmp_path, "suite: s\nworkloads:\n  - name: a\n") == [
        "F:3:5: workloads[0]: size is required: without a filename the workload runs on a "
        "temporary file, which has no size of its own; give size (only an existing file or "
        "device is used whole without one)"]
    assert problems(tmp_path, "suite: s\nworkloads:\n  - name: a\n    ioengine: null\n"
                    "    filename: /x\n")[0].endswith(
        "size is required: the null engine has no file to take a size from")
    # with a file, the file's size is taken when the case runs
    suite = load_suite(write(tmp_path, "suite: s\nworkloads:\n  - name: a\n"
                                       "    filename: /var/tmp/x.data\n"), env={})
    assert suite.cases[0].workload.size is None


def test_duplicate_workload_names(tmp_path):
    text = "suite: s\nworkloads:\n  - name: a\n    size: 1m\n  - name: a\n    size: 1m\n"
    assert problems(tmp_path, text) == [
        "F:5:11: workloads[1].name: workload name 'a' is already used on line 3"]


@pytest.mark.parametrize(("text", "expected"), [
    ("suite: s\n", ["F:1:1: workloads: workloads is required"]),
    ("suite: s\nworkloads: []\n", ["F:2:12: workloads: needs at least one entry"]),
    ("suite: s\nworkloads: {}\n", ["F:2:12: workloads: expected a list, got a mapping"]),
    ("suite: s\nworkloads:\n  - 3\n", ["F:3:5: workloads[0]: expected a mapping, got the "
                                       "integer 3"]),
    ("suite: s\nworklods: []\n", ["F:1:1: workloads: workloads is required",
                                  "F:2:1: worklods: unknown key 'worklods'; did you mean "
                                  "'workloads'?"]),
    ("workloads:\n  - name: a\n    size: 1m\n", ["F:1:1: suite: suite is required"]),
])
def test_top_level_problems(tmp_path, text, expected):
    assert problems(tmp_path, text) == expected


def test_defaults_problems_are_reported_once_at_the_defaults(tmp_path):
    text = """\
    suite: s
    defaults:
      iodepht: 4
      direct: on
      name: x
    workloads:
      - name: a
        size: 1m
      - name: b
        size: 1m
    """
    assert problems(tmp_path, text) == [
        "F:3:3: defaults.iodepht: unknown key 'iodepht'; did you mean 'iodepth'?",
        "F:4:11: defaults.direct: expected true or false, got the string 'on' (only true and "
        "false are booleans)",
        "F:5:3: defaults.name: 'name' cannot be a default; set it in each workload",
    ]


def test_rule_blames_the_workload_when_defaults_set_every_field(tmp_path):
    text = ("suite: s\ndefaults:\n  ioengine: psync\n  iodepth: 4\n"
            "workloads:\n  - name: a\n    size: 1m\n")
    assert problems(tmp_path, text) == [
        "F:6:5: workloads[0]: psync is synchronous: iodepth must be 1; use io_uring, "
        "libaio or posixaio for queue depth"]


def test_all_problems_are_collected(tmp_path):
    text = """\
    suite: s
    workloads:
      - name: a
        size: 10Q
        iodepth: "32"
        runtime: -5
        numjobs: 0
        expect:
          read.clat.p99: "<= 250k"
      - name: b
        size: ${NOPE}
        direct: on
        rw: randread
    """
    got = problems(tmp_path, text)
    assert [p.split(": ")[0] + ": " + p.split(": ")[1] for p in got] == [
        "F:4:11: workloads[0].size", "F:5:14: workloads[0].iodepth",
        "F:6:14: workloads[0].runtime", "F:7:14: workloads[0].numjobs",
        "F:9:22: workloads[0].expect.read.clat.p99", "F:11:11: workloads[1].size",
        "F:12:13: workloads[1].direct"]


def test_variables_feed_typed_values(tmp_path):
    text = one_workload("numjobs: ${JOBS}\ndirect: ${DIRECT}\nrw: ${RW:-randread}\n")
    suite = load_suite(write(tmp_path, text), env={"JOBS": "4", "DIRECT": "true"})
    w = suite.cases[0].workload
    assert (w.numjobs, w.direct, w.rw) == (4, True, "randread")
    # A reference inside a longer string stays a string, and strict typing rejects it.
    assert problems(tmp_path, one_workload("numjobs: x${JOBS}\n"), {"JOBS": "4"}) == [
        "F:5:14: workloads[0].numjobs: expected an integer, got the string 'x4'"]


def test_syntax_error(tmp_path):
    got = problems(tmp_path, "suite: s\nworkloads: [\n")
    assert len(got) == 1
    assert got[0].startswith("F:3:1: invalid YAML")


def test_validate_paths_collects_problems_of_every_file(tmp_path):
    good = tmp_path / "a.suite.yaml"
    good.write_text("suite: a\nworkloads:\n  - name: x\n    size: 1m\n")
    bad1, bad2 = tmp_path / "b.suite.yaml", tmp_path / "c.suite.yaml"
    bad1.write_text("suite: b\n")
    bad2.write_text("suite: c\nworkloads:\n  - name: y\n")
    assert [s.name for s in validate_paths([good])] == ["a"]
    with pytest.raises(SuiteError) as exc:
        validate_paths([good, bad1, bad2])
    assert [p.file for p in exc.value.problems] == [str(bad1), str(bad2)]


def test_missing_file(tmp_path):
    with pytest.raises(SuiteError, match="cannot read"):
        load_suite(tmp_path / "nope.suite.yaml")


# -- JSON schema ------------------------------------------------------------------------------

def test_schema_shape():
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "iogate suite"
    assert set(schema["required"]) == {"suite", "workloads"}
    json.dumps(schema)  # serialisable


def test_schema_lists_the_catalogs_engines_with_their_summaries():
    engine = json_schema()["$defs"]["Defaults"]["properties"]["ioengine"]["anyOf"][0]
    assert engine["oneOf"] == [{"const": e.name, "description": e.summary}
                               for e in catalog.engines()]


def test_schema_agrees_with_the_loader(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    import yaml

    validator = jsonschema.Draft202012Validator(json_schema())
    good = yaml.safe_load(GOOD.replace("${SIZE:-64MiB}", "64MiB").replace("${ncpus}", "2"))
    assert list(validator.iter_errors(good)) == []
    for bad in ({"iodepth": "32"}, {"size": "10Q"}, {"bs": "4MB"}, {"iodepht": 1},
                {"runtime": "5d"}, {"ioengine": "windowsaio"}):
        doc = {"suite": "s", "workloads": [{"name": "w", "size": "1m", **bad}]}
        assert list(validator.iter_errors(doc)), bad


# -- the workload language: every bad input, with its location ------------------------------

@pytest.mark.parametrize(("body", "expected"), [
    ('bssplit: 4k/10:64k/50\nrw: randread\n',
     'F:5:14: workloads[0].bssplit: the percentages add up to 60, not 100'),
    ('bssplit: 4k/10:4Q/90\n',
     "F:5:14: workloads[0].bssplit: bssplit entry '4Q/90': unknown size unit 'Q': use one of "
     'B, k/KiB, m/MiB, g/GiB, t/TiB, p/PiB'),
    ('bssplit: 4k/50:64k/50:8k\n',
     'F:5:14: workloads[0].bssplit: the percentages given already add up to 100: the entries '
     'without one would get nothing'),
    ('bssplit: 4k/70:64k/50:8k\n',
     'F:5:14: workloads[0].bssplit: the percentages given add up to 120, above 100'),
    ('bssplit: 4k/x\n',
     "F:5:14: workloads[0].bssplit: bssplit entry '4k/x': the percentage 'x' is not a number "
     'from 0 to 100'),
    ('bssplit: [{bs: 4k, pct: 10}, {bs: 8k, pct: 80}]\n',
     'F:5:14: workloads[0].bssplit: the percentages add up to 90, not 100'),
    ('bssplit: 4k/50:4k/50\n',
     'F:5:14: workloads[0].bssplit: block size 4KiB is listed twice'),
    ('bs: 4k\nbssplit: 4k/100\n',
     'F:6:5: workloads[0].bssplit: bs and bssplit exclude each other: give one'),
    ('bsrange: 16k-1k\n',
     "F:5:14: workloads[0].bsrange: '16k-1k': the minimum (16KiB) is above the maximum (1KiB)"),
    ('bsrange: 3k-16k\n',
     "F:5:14: workloads[0].bsrange: '3k-16k': the maximum (16KiB) must be a multiple of the "
     'minimum (3KiB)'),
    ('bsrange: 1k\n',
     "F:5:14: workloads[0].bsrange: '1k' is not a range: write 'MIN-MAX', e.g. '1k-16k'"),
    ('rw: rw\nrwmixread: 70\nrwmixwrite: 40\n',
     'F:7:5: workloads[0].rwmixwrite: rwmixread (70) and rwmixwrite (40) must add up to 100'),
    ('rw: randread\nrwmixwrite: 40\n',
     'F:6:5: workloads[0].rwmixwrite: rwmixwrite applies only to rw and randrw, not to '
     'randread'),
    ('rate_iops: 0\n',
     'F:5:16: workloads[0].rate_iops: a rate must be greater than 0; leave it out for no limit'),
    ('rw: randread\nrate_iops: {write: 100}\n',
     'F:6:5: workloads[0].rate_iops: rate_iops sets a write rate, but randread never writes'),
    ('rw: randread\nrate_iops: 100,50\n',
     'F:6:5: workloads[0].rate_iops: rate_iops sets a write rate, but randread never writes'),
    ('rw: randrw\nrate_iops: {read: 100}\n',
     'F:6:5: workloads[0].rate_iops: rate_iops limits only one direction of a mixed workload: '
     'give the total, or both directions'),
    ('rw: randrw\nrate_iops: 1\nrwmixread: 70\n',
     'F:6:5: workloads[0].rate_iops: rate_iops 1 split by rwmixread 70 leaves writes no rate; '
     'raise the total or give both directions'),
    ('rate: 100MB/s\n',
     "F:5:11: workloads[0].rate: ambiguous unit 'MB/s': write '100MiB/s' (104857600 bytes/s) "
     "or '100000000/s'"),
    ('rate_iops: {reed: 5}\n',
     "F:5:17: workloads[0].rate_iops.reed: unknown key 'reed'; did you mean 'read'?"),
    ('rw: write\nbuffer_compress_percentage: 101\n',
     'F:6:33: workloads[0].buffer_compress_percentage: must be at most 100, got 101'),
    ('rw: write\nbuffer_compress_percentage: 50\nzero_buffers: true\n',
     'F:6:5: workloads[0].buffer_compress_percentage: zero_buffers writes only zeros; it '
     'cannot be combined with buffer_compress_percentage'),
    ('buffer_compress_percentage: 50\n',
     'F:5:5: workloads[0].buffer_compress_percentage: buffer_compress_percentage shapes '
     'written data, but read never writes'),
    ('rw: write\nbuffer_pattern: 1234\n',
     'F:6:21: workloads[0].buffer_pattern: 1234: decimal patterns are not accepted; write hex '
     "like '0x4d2' or a quoted string"),
    ('rw: write\nbuffer_pattern: 0xzz\n',
     "F:6:21: workloads[0].buffer_pattern: '0xzz' is not a hex pattern: after 0x only 0-9 and "
     'a-f'),
    ('rw: randread\nrandom_distribution: zipf:1\n',
     "F:6:26: workloads[0].random_distribution: 'zipf:1': zipf needs THETA > 0 and not 1, got "
     '1'),
    ('rw: randread\nrandom_distribution: pareto:1.5\n',
     "F:6:26: workloads[0].random_distribution: 'pareto:1.5': pareto needs 0 < H < 1, got 1.5"),
    ('rw: randread\nrandom_distribution: lognormal:3\n',
     "F:6:26: workloads[0].random_distribution: unknown random_distribution 'lognormal:3': "
     'use random, zipf:THETA, pareto:H, normal:SIGMA, zoned:ACCESS/SIZE:... or sequence:B,B,...'),
    ('rw: randread\nrandom_distribution: zipf\n',
     'F:6:26: workloads[0].random_distribution: zipf needs a parameter (THETA > 0 and not 1), '
     "e.g. 'zipf:1.2'"),
    ('rw: randread\nrandom_distribution: zoned:60/10:30/20\n',
     "F:6:26: workloads[0].random_distribution: 'zoned:60/10:30/20': the access percentages "
     'add up to 90, not 100'),
    ('rw: randread\nrandom_distribution: zoned:50/5:30/:20/\n',
     "F:6:26: workloads[0].random_distribution: 'zoned:50/5:30/:20/': only one zone may leave "
     'its size out (it takes the rest of the region)'),
    ('rw: randread\nrandom_distribution: zoned:50/60:30/50:20/\n',
     "F:6:26: workloads[0].random_distribution: 'zoned:50/60:30/50:20/': the sizes given add "
     'up to 110, leaving nothing for the zone without one'),
    ('random_distribution: zipf:1.2\n',
     'F:5:5: workloads[0].random_distribution: random_distribution applies only to randread, '
     'randwrite, randrw, randtrim and randtrimwrite, not to read'),
    ('numjobs: 4 / 0\n',
     "F:5:14: workloads[0].numjobs: '4 / 0' divides by zero"),
    ('offset: 9223372036854775807 * 2\n',
     "F:5:13: workloads[0].offset: '9223372036854775807 * 2' overflows: a value reaches 2^63 "
     'or more'),
    ('numjobs: 7 / 2\n',
     "F:5:14: workloads[0].numjobs: '7 / 2' is 3.5, not a whole number"),
    ('offset: 4k * 4k\n',
     "F:5:13: workloads[0].offset: '4k * 4k' multiplies a size by a size; one side must be a "
     'plain number'),
    ('numjobs: 2 * (3 - 1) * -1\n',
     "F:5:14: workloads[0].numjobs: '2 * (3 - 1) * -1' is -4: the result cannot be negative"),
    ('offset: 1M - 2M + 512\n',
     "F:5:13: workloads[0].offset: '1M - 2M + 512' is -1048064: the result cannot be negative"),
    ('numjobs: nope * 2\n',
     "F:5:14: workloads[0].numjobs: unknown name 'nope'; a variable is written ${nope}"),
    ('iodepth: (4 + 4\n',
     "F:5:14: workloads[0].iodepth: '(4 + 4': expected ')', found the end"),
    ('thinktime_blocks: 4\n',
     'F:5:5: workloads[0].thinktime_blocks: thinktime_blocks needs a thinktime'),
    ('rw: write\nfsync: 4\nfdatasync: 2\n',
     'F:7:5: workloads[0].fdatasync: fsync and fdatasync exclude each other: give one'),
    ('fsync: 4\n',
     'F:5:5: workloads[0].fsync: fsync syncs after writes, but read never writes'),
    ('ioengine: sync\niodepth: 2\n',
     'F:6:5: workloads[0].iodepth: sync is synchronous: iodepth must be 1; use io_uring, '
     'libaio or posixaio for queue depth'),
    ('filename: [a, a]\n',
     "F:5:15: workloads[0].filename: file 2: 'a' is listed twice"),
    ('filename: []\n',
     'F:5:15: workloads[0].filename: give at least one file, or leave filename out for a '
     'temporary file'),
    ('randseed: 5\nrandrepeat: false\n',
     'F:6:5: workloads[0].randrepeat: randrepeat: false asks for a new seed every run, but '
     'randseed fixes it: give one of them'),
    ('precondition:\n  - {bs: 1M}\n',
     'F:6:9: workloads[0].precondition[0].rw: rw is required'),
    ('precondition:\n  - {rw: write, loops: 0}\n',
     'F:6:28: workloads[0].precondition[0].loops: must be at least 1, got 0'),
    ('precondition:\n  - {rw: write, name: x}\n',
     "F:6:21: workloads[0].precondition[0].name: a precondition step has no 'name'; it "
     'belongs to the workload'),
    ('rate_process: poisson\n',
     'F:5:5: workloads[0].rate_process: rate_process needs rate or rate_iops'),
    ('rw: write\nrefill_buffers: false\ndedupe_percentage: 20\n',
     'F:6:5: workloads[0].refill_buffers: compressible or deduplicable data needs new buffer '
     'contents for every write; remove refill_buffers: false'),
])
def test_bad_workload_language(tmp_path, body, expected):
    assert problems(tmp_path, one_workload(body)) == [expected]


def test_bssplit_list_entry_problems(tmp_path):
    assert problems(tmp_path, one_workload("bssplit: [{bs: 4k, pct: 10}, {bz: 8k}]\n")) == [
        "F:5:34: workloads[0].bssplit[1].bs: bs is required",
        "F:5:35: workloads[0].bssplit[1].bz: unknown key 'bz'; valid keys are: bs, pct"]


# -- the workload language: good input ------------------------------------------------------

def load_one(tmp_path, body: str, env=None) -> Case:
    return load_suite(write(tmp_path, one_workload(body)), env=env or {}).cases[0]


def test_bssplit_forms_agree(tmp_path):
    from fractions import Fraction

    from iogate.spec.rules import block_table
    text = load_one(tmp_path, "bssplit: 4k/10:64k/50:32k\n").workload
    listed = load_one(tmp_path, "bssplit: [{bs: 4k, pct: 10}, {bs: 64k, pct: 50}, "
                                "{bs: 32k}]\n").workload
    for w in (text, listed):
        for d in ("read", "write"):
            assert block_table(w, d) == [(4096, 4096, Fraction(10)),
                                         (65536, 65536, Fraction(50)),
                                         (32768, 32768, Fraction(40))]


def test_bssplit_per_direction(tmp_path):
    from fractions import Fraction

    from iogate.spec.rules import block_table
    w = load_one(tmp_path, "rw: randrw\nbssplit: '4k/50:8k/50,16k/100'\n").workload
    assert block_table(w, "read") == [(4096, 4096, Fraction(50)), (8192, 8192, Fraction(50))]
    assert block_table(w, "write") == [(16384, 16384, Fraction(100))]
    m = load_one(tmp_path, "rw: randrw\nbssplit: {read: 4k/50:8k, write: "
                           "[{bs: 16k}]}\n").workload
    assert block_table(m, "write") == [(16384, 16384, Fraction(100))]
    blanks = load_one(tmp_path, "bssplit: 4k:8k:16k\n").workload
    assert [s for _, _, s in block_table(blanks, "read")] == [Fraction(100, 3)] * 3


def test_bs_keys_from_defaults_give_way_to_the_workload(tmp_path):
    text = ("suite: s\ndefaults:\n  bs: 8k\n  rwmixread: 70\nworkloads:\n  - name: a\n"
            "    size: 1m\n    rw: randrw\n    bssplit: 4k/100\n    rwmixwrite: 20\n")
    w = load_suite(write(tmp_path, text), env={}).cases[0].workload
    assert w.bssplit is not None
    assert w.rwmixread == 80
    assert w.rwmixwrite == 20


def test_rates_mixes_and_arithmetic(tmp_path):
    c = load_one(tmp_path, "rw: randrw\nrwmixwrite: 30\nrate_iops: 20k\nrate: 100m\n"
                           "numjobs: ${ncpus} * 2\noffset: ${MB}M / 4\niodepth: (4 + 4) * 2\n",
                 env={"ncpus": "3", "MB": "1024"})
    w = c.workload
    assert (w.rwmixread, w.numjobs, w.offset, w.iodepth) == (70, 6, 256 * MiB, 16)
    assert (w.rate_iops.total, w.rate.total) == (20000, 100 * MiB)
    per = load_one(tmp_path, "rw: randrw\nrate_iops: 700,300\nrate: {read: 10MiB/s, "
                             "write: 5m}\n").workload
    assert (per.rate_iops.read, per.rate_iops.write) == (700, 300)
    assert (per.rate.read, per.rate.write) == (10 * MiB, 5 * MiB)


def test_data_distribution_files_engines_phases(tmp_path):
    c = load_one(tmp_path, """\
        rw: randwrite
        buffer_compress_percentage: 50
        buffer_pattern: 0xdeadbeef
        random_distribution: zoned:60/10:30/20:10/70
        filename: [/var/tmp/a, /var/tmp/b]
        ioengine: libaio
        iodepth: 8
        fdatasync: 16
        thinktime: 1ms
        thinktime_blocks: 4
        randseed: 42
        group: g
        precondition:
          - {rw: write, bs: 256k, loops: 2}
          - {rw: randwrite, iodepth: 4, filename: /var/tmp/c}
        """)
    w = c.workload
    assert w.buffer_pattern == b"\xde\xad\xbe\xef"
    assert w.filenames == ["/var/tmp/a", "/var/tmp/b"]
    assert str(w.random_distribution) == "zoned:60/10:30/20:10/70"
    assert (w.thinktime, w.thinktime_blocks, w.fdatasync, w.randseed) == (10**6, 4, 16, 42)
    assert c.group == "g"
    assert w.group == "g"
    first, second = c.preconditions
    assert (first.rw, first.bs.read, first.loops, first.size, first.filename, first.ioengine) == (
        "write", 256 * KiB, 2, MiB, ["/var/tmp/a", "/var/tmp/b"], "libaio")
    assert (second.iodepth, second.filename, second.bs.read) == (4, "/var/tmp/c", 4096)
    dumped = w.model_dump(mode="json")
    assert dumped["buffer_pattern"] == "0xdeadbeef"
    assert dumped["random_distribution"] == "zoned:60/10:30/20:10/70"
    json.dumps(dumped)


@pytest.mark.parametrize(("text", "shown"), [
    ("zoned:50/5:30/15:20/", "zoned:50/5:30/15:20/80"),  # fio's rand-zones.fio
    ("zoned:50/:50/66.7", "zoned:50/33.3:50/66.7"),
])
def test_a_zoned_distribution_zone_without_a_size_takes_the_rest(tmp_path, text, shown):
    w = load_one(tmp_path, f"rw: randread\nrandom_distribution: {text!r}\n").workload
    assert str(w.random_distribution) == shown


def test_a_sequence_distribution_names_its_blocks_in_order(tmp_path):
    w = load_one(tmp_path, "rw: randread\nrandom_distribution: 'sequence: 2, 0,1'\n"
                           "random_sequence_stride: true\n").workload
    assert w.random_distribution.blocks == [2, 0, 1]
    assert w.random_sequence_stride is True
    assert str(w.random_distribution) == "sequence:2,0,1"
    assert w.model_dump(mode="json")["random_distribution"] == "sequence:2,0,1"


@pytest.mark.parametrize(("body", "says"), [
    ("random_distribution: 'sequence:'\n", "sequence needs block indices"),
    ("random_distribution: 'sequence:1,-2'\n", "'-2' is not a whole number"),
    ("random_distribution: 'sequence:1,\uff12'\n", "is not a whole number"),
    ("random_distribution: 'sequence:1,,2'\n", "'' is not a whole number"),
    (f"random_distribution: 'sequence:{','.join(['1'] * 65)}'\n", "at most 64 block indices"),
    ("random_sequence_stride: true\n", "random_sequence_stride moves the blocks of"),
    ("random_distribution: zipf:1.2\nrandom_sequence_stride: false\n",
     "which this workload does not have"),
])
def test_a_wrong_sequence_is_refused_with_the_reason(tmp_path, body, says):
    found = problems(tmp_path, one_workload("rw: randread\n" + body))
    assert any(says in p for p in found), found


def test_buffer_pattern_as_text(tmp_path):
    w = load_one(tmp_path, "rw: write\nbuffer_pattern: '\"iogate\"'\n").workload
    assert w.buffer_pattern == b"iogate"
    assert load_one(tmp_path, "rw: write\nbuffer_pattern: abc\n").workload.buffer_pattern == b"abc"


def test_precondition_from_defaults_inherits_each_workloads_size(tmp_path):
    text = ("suite: s\ndefaults:\n  precondition:\n    - {rw: write}\nworkloads:\n"
            "  - name: a\n    size: 1m\n  - name: b\n    size: 2m\n")
    a, b = load_suite(write(tmp_path, text), env={}).cases
    assert (a.preconditions[0].size, b.preconditions[0].size) == (MiB, 2 * MiB)
    assert a.group is None


def test_precondition_rule_blames_the_step(tmp_path):
    text = one_workload("precondition:\n  - {rw: write, ioengine: psync, iodepth: 4}\n")
    assert problems(tmp_path, text) == [
        "F:6:38: workloads[0].precondition[0].iodepth: psync is synchronous: iodepth must be 1; "
        "use io_uring, libaio or posixaio for queue depth"]


def test_a_list_sets_several_bounds_on_one_metric(tmp_path):
    text = ("suite: s\nworkloads:\n  - name: a\n    ioengine: null\n    rw: write\n"
            "    size: 1m\n    expect:\n      write.iops: ['>= 1', '<= 100G']\n")
    suite = load_suite(write(tmp_path, text), env={})
    [case] = suite.cases
    assert [(e.metric.text, e.op) for e in case.expectations] == [
        ("write.iops", ">="), ("write.iops", "<=")]
    assert case.source_lines == {8: "      write.iops: ['>= 1', '<= 100G']"}


def test_a_bad_bound_in_a_list_is_located_at_its_item(tmp_path):
    text = ("suite: s\nworkloads:\n  - name: a\n    ioengine: null\n    rw: write\n"
            "    size: 1m\n    expect:\n      write.iops:\n        - '>= 1'\n        - '<= 2ms'\n")
    with pytest.raises(SuiteError) as info:
        load_suite(write(tmp_path, text), env={})
    assert "s.suite.yaml:10:11: workloads[0].expect.write.iops[1]:" in str(info.value)


def test_direct_is_refused_for_an_engine_that_cannot_bypass_the_cache(tmp_path):
    from iogate.engine import catalog

    cached = [e for e in catalog.engines() if not e.direct]
    assert cached, "the catalog has an engine without O_DIRECT (mmap)"
    for engine in cached:
        [line] = problems(tmp_path, one_workload(f"ioengine: {engine.name}\ndirect: true\n"))
        assert line.startswith(f"F:6:5: workloads[0].direct: {engine.name} cannot bypass the "
                               "page cache: direct does not apply to it; remove direct or use ")
    # and the same engine without direct is a valid workload
    load_suite(write(tmp_path, one_workload(f"ioengine: {cached[0].name}\n")), env={})
