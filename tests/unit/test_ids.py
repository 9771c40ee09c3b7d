"""Case ids: sweep points written so that pytest's -k takes them, ``-k`` in the CLI matching
whole names and values inside a point, and ids of the earlier '=' form read as today's."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iogate import ids
from iogate.baseline import FORMAT, VERSION, Baseline


def test_a_point_is_written_with_colons():
    assert ids.point_label({"bs": "4k", "iodepth": "32"}) == "bs:4k-iodepth:32"


@pytest.mark.parametrize(("earlier", "now"), [
    ("qd[bs=4k-iodepth=32]", "qd[bs:4k-iodepth:32]"),
    ("s.suite.yaml::qd[iodepth=1]", "s.suite.yaml::qd[iodepth:1]"),
    ("w[range=1k-16k-depth=8]", "w[range:1k-16k-depth:8]"),  # a value with '-' in it
    ("w[opt=a=b]", "w[opt:a=b]"),  # only the join after a variable's name
    ("plain", "plain"), ("qd[bs:4k-iodepth:32]", "qd[bs:4k-iodepth:32]"),
    ("odd[not a point]", "odd[not a point]"),
])
def test_ids_of_the_earlier_form_read_as_todays(earlier, now):
    assert ids.current(earlier) == now
    assert ids.current(now) == now


NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
VALUE = st.from_regex(r"[0-9a-zA-Z.]{1,6}", fullmatch=True)


@given(st.dictionaries(NAME, VALUE, min_size=1, max_size=4))
def test_every_point_converts_and_selects_by_its_own_names_and_values(point):
    earlier = "w[" + "-".join(f"{k}={v}" for k, v in point.items()) + "]"
    now = f"w[{ids.point_label(point)}]"
    assert ids.current(earlier) == now
    for k, v in point.items():
        assert ids.selects(now, f"{k}:{v}")
        assert ids.selects(now, f"{k}={v}")
        assert ids.selects(now, k)


IDS = ["qd.suite.yaml::scale[iodepth:1]", "qd.suite.yaml::scale[iodepth:16]",
       "qd.suite.yaml::scale[iodepth:32]", "qd.suite.yaml::big[bs:1m-iodepth:1]", "lone"]


@pytest.mark.parametrize(("pattern", "selected"), [
    ("iodepth:1", ["scale[iodepth:1]", "big[bs:1m-iodepth:1]"]),
    ("iodepth=1", ["scale[iodepth:1]", "big[bs:1m-iodepth:1]"]),  # the earlier spelling
    ("iodepth:3", []), ("iodepth:32", ["scale[iodepth:32]"]),
    ("scale", ["scale[iodepth:1]", "scale[iodepth:16]", "scale[iodepth:32]"]),
    ("sca", ["scale[iodepth:1]", "scale[iodepth:16]", "scale[iodepth:32]"]),  # a name: as is
    ("bs:1m-", ["big[bs:1m-iodepth:1]"]), ("[bs:1m", ["big[bs:1m-iodepth:1]"]),
    ("[bs:1", []),  # a value is matched whole
    ("iodepth:1]", ["scale[iodepth:1]", "big[bs:1m-iodepth:1]"]),
    ("lone", ["lone"]), ("", [i.split("::")[-1] for i in IDS]),
])
def test_k_matches_whole_names_and_values_inside_a_point(pattern, selected):
    assert [i.split("::")[-1] for i in IDS if ids.selects(i, pattern)] == selected


def test_a_baseline_of_earlier_ids_pairs_with_todays_cases():
    baseline = Baseline.from_document({"format": FORMAT, "version": VERSION, "entries": [
        {"case": "s.suite.yaml::qd[iodepth=8]", "environment": {},
         "metrics": {"read.iops": 10.0}}]}, "b.json")
    assert [e.metrics for e in baseline.for_case("s.suite.yaml::qd[iodepth:8]")] == [
        {"read.iops": 10.0}]
