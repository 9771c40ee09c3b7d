"""The suite keys of I/O priorities: prio and prioclass (the workload's threads) and the
command priorities cmdprio_percentage, cmdprio_class, cmdprio and cmdprio_bssplit; their
values, the rules between them and the engine, and what they lower to."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.job import PrioEntry
from iogate.lower import lower
from iogate.spec import load_suite

RT, BE, IDLE = 1 << 13, 2 << 13, 3 << 13


def load(tmp_path: Path, body: str):
    f = tmp_path / "s.suite.yaml"
    f.write_text("suite: s\nworkloads:\n  - name: w\n    size: 1MiB\n"
                 + textwrap.indent(textwrap.dedent(body), "    "))
    return f, load_suite(f, env={})


def spec_of(tmp_path: Path, body: str):
    _, suite = load(tmp_path, body)
    return lower(suite.cases[0].workload, filenames=["/var/tmp/x"], seed=1)


@pytest.mark.parametrize(("body", "ioprio"), [
    ("rw: read\n", 0),
    ("prio: 4\n", BE | 4),  # no class: best effort, as fio
    ("prioclass: 3\n", IDLE),
    ("prioclass: idle\nprio: 7\n", IDLE | 7),
    ("prioclass: rt\nprio: 2\n", RT | 2),
    ("prioclass: 0\nprio: 1\n", BE | 1),
    ("prioclass: 2\nioengine: psync\n", BE),  # every engine: the thread's priority
])
def test_the_job_priority_lowers_to_one_value(tmp_path, body, ioprio):
    assert spec_of(tmp_path, body).ioprio == ioprio


def test_cmdprio_percentage_is_one_entry_per_direction(tmp_path):
    spec = spec_of(tmp_path, """\
        rw: randrw
        cmdprio_percentage: 20,5
        cmdprio_class: rt,idle
        cmdprio: 3
        """)
    assert spec.cmdprio_read == [PrioEntry(bs=0, share=200_000, ioprio=RT | 3)]
    assert spec.cmdprio_write == [PrioEntry(bs=0, share=50_000, ioprio=IDLE | 3)]


def test_a_direction_the_workload_never_issues_gets_no_table(tmp_path):
    spec = spec_of(tmp_path, "rw: randread\ncmdprio_percentage: 25\n")
    assert spec.cmdprio_read == [PrioEntry(bs=0, share=250_000, ioprio=RT)]
    assert spec.cmdprio_write == []


def test_cmdprio_bssplit_in_both_of_fios_forms(tmp_path):
    spec = spec_of(tmp_path, """\
        rw: randrw
        bssplit: 64k/40:1m/60,1m/100
        cmdprio_bssplit: 64k/25/1/1:64k/75/3/2:1m/0,1m/10
        cmdprio_class: 2
        cmdprio: 5
        """)
    assert spec.cmdprio_read == [PrioEntry(65536, 250_000, RT | 1),
                                 PrioEntry(65536, 750_000, IDLE | 2)]
    assert spec.cmdprio_write == [PrioEntry(1 << 20, 100_000, BE | 5)]


def test_cmdprio_bssplit_as_a_list(tmp_path):
    spec = spec_of(tmp_path, """\
        rw: randread
        bssplit: 4k/50:8k/50
        cmdprio_bssplit: [{bs: 8k, pct: 50, class: idle, level: 1}]
        """)
    assert spec.cmdprio_read == [PrioEntry(8192, 500_000, IDLE | 1)]


@pytest.mark.parametrize(("body", "said"), [
    ("prio: 8\n", "prio: must be at most 7, got 8"),
    ("prioclass: 4\n", "prioclass: must be at most 3, got 4"),
    ("prioclass: turbo\n", "prioclass: 'turbo' is not an I/O priority class"),
    ("cmdprio_percentage: 101\n", "cmdprio_percentage: a percentage must be an integer "
                                  "from 0 to 100, got the integer 101"),
    ("cmdprio_percentage: 20\nioengine: psync\n",
     "psync cannot give single requests a priority: cmdprio_percentage needs io_uring or "
     "libaio"),
    ("cmdprio_bssplit: 4k/50\nioengine: sync\n", "cmdprio_bssplit needs io_uring or libaio"),
    ("cmdprio_percentage: 20\ncmdprio_bssplit: 4k/50\n",
     "cmdprio_percentage and cmdprio_bssplit exclude each other"),
    ("cmdprio_bssplit: 4k/60:4k/50\n", "the percentages of block size 4KiB add up to 110"),
    ("cmdprio_bssplit: 4k/10/2/0/1\n", "newer than fio 3.33"),
    ("cmdprio_bssplit: 4k/10/2\n", "write SIZE/PERCENT or SIZE/PERCENT/CLASS/LEVEL"),
    ("cmdprio_bssplit: 4k/10/2/9\n", "the level must be an integer from 0 to 7"),
    ("cmdprio: 9\n", "a priority level must be an integer from 0 to 7"),
])
def test_bad_values_and_combinations_are_named_at_their_line(tmp_path, body, said):
    with pytest.raises(SuiteError) as info:
        load(tmp_path, body)
    problems = [str(p) for p in info.value.problems]
    assert len(problems) == 1, problems
    assert said in problems[0], problems
    key = body.split(":")[0] if "exclude" not in said else "cmdprio_bssplit"
    line = 5 + [ln.split(":")[0] for ln in body.splitlines()].index(key)
    assert f"s.suite.yaml:{line}:" in problems[0], problems
