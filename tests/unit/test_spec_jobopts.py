"""The suite keys of how long a workload runs and where it goes next: io_size, number_ios,
end_fsync, seq_skip, startdelay, fill_device, flow; their values, the rules between them and other
keys, and what they lower to."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.lower import lower
from iogate.spec import load_suite

KiB, MiB = 1 << 10, 1 << 20
MS = 1_000_000


def load(tmp_path: Path, body: str):
    f = tmp_path / "s.suite.yaml"
    f.write_text("suite: s\nworkloads:\n  - name: w\n    size: 1MiB\n"
                 + textwrap.indent(textwrap.dedent(body), "    "))
    return f, load_suite(f, env={})


def test_every_key_lowers_to_the_engine(tmp_path):
    _, suite = load(tmp_path, """\
        rw: write
        filename: /var/tmp/x
        io_size: 3MiB
        number_ios: 100
        end_fsync: true
        seq_skip: -8k
        startdelay: 1500ms
        """)
    spec = lower(suite.cases[0].workload, filenames=["/var/tmp/x"], seed=1)
    assert (spec.io_limit_bytes, spec.io_limit_ios, spec.end_fsync, spec.seq_skip,
            spec.start_delay_ns) == (3 * MiB, 100, True, -8 * KiB, 1_500_000_000)


def test_fill_device_lowers_to_a_growing_file(tmp_path):
    _, suite = load(tmp_path, "rw: write\nfill_device: true\n")
    spec = lower(suite.cases[0].workload, filenames=["/var/tmp/x"], seed=1)
    assert (spec.fill, spec.no_layout, spec.size) == (True, True, MiB)


def test_fill_device_without_size_needs_the_file_on_the_filesystem_to_fill(tmp_path):
    f = tmp_path / "s.suite.yaml"
    f.write_text("suite: s\nworkloads:\n  - name: w\n    rw: write\n    fill_device: true\n")
    with pytest.raises(SuiteError) as info:
        load_suite(f, env={})
    (problem,) = [str(p) for p in info.value.problems]
    assert "fill_device without size fills the filesystem of its file: give the filename" \
        in problem


def test_flow_lowers_to_the_engines_weight_id_and_sleep(tmp_path):
    _, suite = load(tmp_path, "flow: 8\nflow_id: 2\nflow_sleep: 1ms\n")
    spec = lower(suite.cases[0].workload, filenames=["/var/tmp/x"], seed=1)
    assert (spec.flow_weight, spec.plain) == (8, {"flow_id": 2, "flow_sleep_ns": MS})


def test_the_defaults_change_nothing(tmp_path):
    _, suite = load(tmp_path, "rw: read\n")
    spec = lower(suite.cases[0].workload, filenames=["/var/tmp/x"], seed=1)
    assert (spec.io_limit_bytes, spec.io_limit_ios, spec.end_fsync, spec.seq_skip,
            spec.start_delay_ns) == (0, 0, False, 0, 0)


@pytest.mark.parametrize(("value", "expected"), [
    ("8k", 8 * KiB), ("-8k", -8 * KiB), (-4096, -4096), ("'-(4k * 2)'", -8 * KiB), (0, 0)])
def test_seq_skip_takes_signed_sizes(tmp_path, value, expected):
    _, suite = load(tmp_path, f"seq_skip: {value}\n")
    assert suite.cases[0].workload.seq_skip == expected


@pytest.mark.parametrize(("body", "said"), [
    ("rw: read\nend_fsync: true\n", "end_fsync syncs after writes, but read never writes"),
    ("rw: write\nioengine: null\nend_fsync: true\n",
     "end_fsync needs a file; the null engine has none"),
    ("rw: randread\nseq_skip: 4k\n", "seq_skip moves the offset of sequential workloads"),
    ("number_ios: 0\n", "number_ios: must be at least 1"),
    ("io_size: 0\n", "io_size: must be greater than 0"),
    ("seq_skip: --8k\n", "seq_skip: '--8k' is not a size with a '-' before it"),
    ("startdelay: -1s\n", "startdelay: '-1s': a duration cannot be negative"),
    ("rw: randwrite\nfill_device: true\n", "fill_device writes sequentially until the "
                                            "filesystem is full: rw must be write, not randwrite"),
    ("rw: write\nfill_device: true\ntime_based: true\nruntime: 1s\n",
     "fill_device ends when the filesystem is full: it cannot be time_based"),
    ("rw: write\nfill_device: true\nramp_time: 1s\n", "fill_device counts every write"),
    ("rw: write\nioengine: null\nfill_device: true\n", "fill_device needs a file; null has none"),
    ("flow_sleep: 1ms\n", "flow_sleep does nothing without flow: set flow, or remove flow_sleep"),
    ("flow_id: 2\n", "flow_id does nothing without flow: set flow, or remove flow_id"),
    ("flow: 1001\n", "flow: must be at most 1000"),
])
def test_bad_values_and_combinations_are_named(tmp_path, body, said):
    with pytest.raises(SuiteError) as info:
        load(tmp_path, body)
    problems = [str(p) for p in info.value.problems]
    assert len(problems) == 1, problems
    assert said in problems[0], problems
