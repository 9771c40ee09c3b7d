"""The suite keys of submission batching: iodepth_batch_submit,
iodepth_batch_complete_min, iodepth_batch_complete_max and iodepth_low; the rules that tie
them to an asynchronous engine and to iodepth, and what they lower to."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.lower import lower
from iogate.spec import load_suite


def load(tmp_path: Path, body: str):
    f = tmp_path / "s.suite.yaml"
    f.write_text("suite: s\nworkloads:\n  - name: w\n    size: 1MiB\n"
                 + textwrap.indent(textwrap.dedent(body), "    "))
    return f, load_suite(f, env={})


def problems(tmp_path: Path, body: str) -> list[str]:
    with pytest.raises(SuiteError) as exc:
        load(tmp_path, body)
    f = tmp_path / "s.suite.yaml"
    return [str(p).replace(str(f), "F") for p in exc.value.problems]


def test_every_key_lowers_to_the_engine(tmp_path):
    _, suite = load(tmp_path, """\
        ioengine: libaio
        iodepth: 16
        iodepth_batch_submit: 8
        iodepth_batch_complete_min: 4
        iodepth_batch_complete_max: 12
        iodepth_low: 2
        """)
    spec = lower(suite.cases[0].workload, filenames=["/var/tmp/x"], seed=1)
    assert (spec.batch_submit, spec.batch_complete_min, spec.batch_complete_max,
            spec.depth_low) == (8, 4, 12, 2)


def test_the_defaults_change_nothing(tmp_path):
    _, suite = load(tmp_path, "iodepth: 16\n")
    spec = lower(suite.cases[0].workload, filenames=["/var/tmp/x"], seed=1)
    assert (spec.batch_submit, spec.batch_complete_min, spec.batch_complete_max,
            spec.depth_low) == (0, 0, 0, 0)


@pytest.mark.parametrize(("body", "said"), [
    ("ioengine: psync\niodepth_batch_submit: 4\n",
     "F:6:5: workloads[0].iodepth_batch_submit: iodepth_batch_submit batches the requests of "
     "an asynchronous engine; psync issues one at a time: remove it or use io_uring, libaio "
     "or posixaio"),
    ("iodepth_low: 1\n",
     "F:5:5: workloads[0].iodepth_low: iodepth_low batches requests of a queue, but iodepth "
     "is 1: raise iodepth or remove iodepth_low"),
    ("iodepth: 8\niodepth_batch_complete_min: 16\n",
     "F:6:5: workloads[0].iodepth_batch_complete_min: iodepth_batch_complete_min (16) must be "
     "at most iodepth (8)"),
    ("iodepth: 8\niodepth_batch_complete_min: 4\niodepth_batch_complete_max: 2\n",
     "F:7:5: workloads[0].iodepth_batch_complete_max: iodepth_batch_complete_max (2) must be "
     "at least iodepth_batch_complete_min (4)"),
    ("iodepth: 8\niodepth_batch_submit: 0\n",
     "F:6:27: workloads[0].iodepth_batch_submit: must be at least 1, got 0"),
])
def test_bad_values_are_refused_at_their_key(tmp_path, body, said):
    got = problems(tmp_path, body)
    assert len(got) == 1, got
    assert got[0].startswith(said), got
