"""``--set`` over a suite's keys (iogate.spec.overrides): the last layer of every workload's
and precondition step's keys, read and checked like a suite's values."""

from __future__ import annotations

import pytest

from iogate.spec import load_suite_text
from iogate.spec.overrides import OverrideError, parse_overrides

SUITE = """\
suite: s
defaults:
  ioengine: null
  size: 1m
workloads:
  - name: swept
    rw: randread
    bssplit: 4k/50:8k/50
    sweep:
      iodepth: [1, 8]
  - name: prepared
    rw: randread
    iodepth: 2
    precondition:
      - rw: write
        size: 2m
"""


def test_set_is_the_last_layer_of_every_workload_and_step() -> None:
    over = parse_overrides(["iodepth=4", "bs=16k", "size=2m", "loops=3", "size=3m"])
    cases = load_suite_text(SUITE, "s.suite.yaml", overrides=over).cases
    assert [c.id for c in cases] == ["swept[iodepth:1]", "swept[iodepth:8]", "prepared"]
    for case in cases:  # over the defaults, the workload and the sweep point
        w = case.workload
        assert (w.iodepth, w.size, w.bssplit, w.bs.read) == (4, 3 << 20, None, 16384)
    [step] = cases[2].preconditions
    assert (step.size, step.loops, step.bs.write) == (3 << 20, 3, 16384)


def test_values_are_read_as_a_suite_writes_them() -> None:
    over = parse_overrides(["time_based=true", "size=16m", "rwmixread=70", "randseed=7"])
    assert dict(over.values) == {"time_based": True, "size": "16m", "rwmixread": 70,
                                 "randseed": 7}


@pytest.mark.parametrize(("given", "said"), [
    ("bs=4q", "--set bs=4q: "),
    ("direct=on", "(only true and false are booleans)"),
    ("steady_state=x", "'steady_state' cannot be set for every workload"),
    ("=1", "expected KEY=VALUE"),
    ("size=", "give a value"),
])
def test_a_bad_set_says_why(given: str, said: str) -> None:
    with pytest.raises(OverrideError) as info:
        parse_overrides([given])
    assert said in str(info.value)
