"""Suite validation end to end: load_suite on files, every bad input with its location."""

import json
import textwrap
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.expect import Expectation
from iogate.spec import Case, LoadedSuite, load_suite, validate_paths
from iogate.spec.models import BlockSizes, Workload
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
    assert a.suite_name == "smoke" and a.path == f
    wa = a.workload
    assert (wa.rw, wa.bs, wa.iodepth, wa.numjobs, wa.size) == (
        "randread", BlockSizes(read=4096, write=4096), 32, 3, 64 * MiB)
    assert (wa.runtime, wa.time_based, wa.direct, wa.ioengine) == (10 * 10**9, True, True,
                                                                   "io_uring")
    assert wa.rwmixread is None
    assert [e.metric.text for e in a.expectations] == ["read.iops", "read.clat.p99",
                                                       "read.clat.p99.9"]
    assert all(isinstance(e, Expectation) for e in a.expectations)
    assert a.source_lines["read.clat.p99"] == (16, '      read.clat.p99: "<= 1.2ms"')
    wb = b.workload
    assert (wb.rw, wb.rwmixread, wb.bs, wb.size, wb.direct) == (
        "rw", 50, BlockSizes(read=4 * KiB, write=64 * KiB), 8 * MiB, False)
    wc = c.workload
    assert (wc.rwmixread, wc.bs, wc.ioengine, wc.iodepth) == (
        70, BlockSizes(read=8 * KiB, write=16 * KiB), "psync", 1)
    assert c.expectations == [] and c.source_lines == {}


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
    assert "s.suite.yaml:5:" in str(info.value) and "workloads[0].ioengine" in str(info.value)


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
    assert dumped["bs"] == {"read": 4096, "write": 4096} and dumped["size"] == MiB


# -- every bad input, with its location ----------------------------------------------------

@pytest.mark.parametrize("body, expected", [
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
    ("ioengine: libaio\n", "F:5:15: workloads[0].ioengine: ioengine 'libaio' is not supported "
                           "yet; use io_uring"),
    ("ioengine: sync\n", "F:5:15: workloads[0].ioengine: ioengine 'sync' is not supported yet"),
    ("ioengine: spdk\n", "F:5:15: workloads[0].ioengine: expected one of 'io_uring', 'psync' or "
                         "'null'; got the string 'spdk'"),
    ("rw: trim\n", "F:5:9: workloads[0].rw: expected one of 'read', 'write'"),
    ("ioengine: psync\niodepth: 8\n", "F:6:5: workloads[0].iodepth: psync is synchronous: "
                                      "iodepth must be 1; use io_uring for queue depth"),
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


def test_name_problems(tmp_path):
    text = "suite: s\nworkloads:\n  - name: a b\n    size: 1m\n  - size: 1m\n"
    assert problems(tmp_path, text) == [
        "F:3:11: workloads[0].name: 'a b' is not a valid name: use letters, digits, '_', '.' "
        "and '-' only",
        "F:5:5: workloads[1].name: name is required",
    ]


def test_size_is_required(tmp_path):
    assert problems(tmp_path, "suite: s\nworkloads:\n  - name: a\n") == [
        "F:3:5: workloads[0].size: size is required"]


def test_duplicate_workload_names(tmp_path):
    text = "suite: s\nworkloads:\n  - name: a\n    size: 1m\n  - name: a\n    size: 1m\n"
    assert problems(tmp_path, text) == [
        "F:5:11: workloads[1].name: workload name 'a' is already used on line 3"]


@pytest.mark.parametrize("text, expected", [
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
        "F:6:5: workloads[0]: psync is synchronous: iodepth must be 1; use io_uring for queue "
        "depth"]


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
    assert len(got) == 1 and got[0].startswith("F:3:1: invalid YAML")


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


def test_schema_agrees_with_the_loader(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    import yaml

    validator = jsonschema.Draft202012Validator(json_schema())
    good = yaml.safe_load(GOOD.replace("${SIZE:-64MiB}", "64MiB").replace("${ncpus}", "2"))
    assert list(validator.iter_errors(good)) == []
    for bad in ({"iodepth": "32"}, {"size": "10Q"}, {"bs": "4MB"}, {"iodepht": 1},
                {"runtime": "5d"}, {"ioengine": "libaio"}):
        doc = {"suite": "s", "workloads": [{"name": "w", "size": "1m", **bad}]}
        assert list(validator.iter_errors(doc)), bad
