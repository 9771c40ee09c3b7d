"""Baseline files: building from results, round trips, lookup, merge, and bad files."""

import json

import pytest

from iogate.baseline import Baseline, BaselineError, BaselineMatchError, Entry, parse_match
from iogate.errors import IogateError

ENV = {"host": "ci-7", "kernel": "6.8.0", "device_model": "ACME NVMe 1TB", "firmware": "1.2",
       "cpu_count": 16, "iogate_version": "0.1.0"}


def results(cases, environment=ENV):
    return {"schema_version": 1, "iogate_version": "0.1.0", "created": "2024-01-01T00:00:00",
            "environment": dict(environment), "summary": {}, "cases": cases}


def case(case_id, outcome="passed", samples=None, **metrics):
    out = {"id": case_id, "outcome": outcome, "metrics": metrics, "checks": []}
    if samples is not None:
        out["samples"] = samples
    return out


def test_from_results_with_and_without_samples():
    doc = results([
        case("s.suite.yaml::a", **{"read.iops": 1000.0, "read.clat.p99": 2e6}),
        case("s.suite.yaml::b", samples={"read.iops": [900.0, 1000.0, 1100.0]},
             **{"read.iops": 1000.0}),
    ])
    base = Baseline.from_results(doc)
    a = base.choose("s.suite.yaml::a", ENV).entry
    b = base.choose("s.suite.yaml::b", ENV).entry
    assert a.value("read.iops") == 1000.0
    assert a.samples("read.iops") == [1000.0]
    assert a.value("write.iops") is None
    assert a.samples("write.iops") == []
    assert b.samples("read.iops") == [900.0, 1000.0, 1100.0]
    assert a.environment == {"device_model": "ACME NVMe 1TB", "firmware": "1.2",
                             "host": "ci-7", "kernel": "6.8.0", "iogate_version": "0.1.0"}


def test_partial_runs_are_left_out_and_unmeasured_metrics_skipped():
    doc = results([case("s::ok", **{"read.iops": 1.0, "write.iops": None}),
                   case("s::failed", "failed", **{"read.iops": 2.0}),
                   case("s::err", "error", **{"read.iops": 3.0}),
                   case("s::int", "interrupted", **{"read.iops": 4.0})])
    base = Baseline.from_results(doc)
    assert sorted(e.case_id for e in base.entries) == ["s::failed", "s::ok"]
    ok = base.choose("s::ok", ENV).entry
    assert ok.metrics == {"read.iops": 1.0}


def test_case_environment_overrides_the_documents():
    c = case("s::a", **{"read.iops": 1.0})
    c["environment"] = {"device_model": "Other SSD", "firmware": "9.9"}
    entry = Baseline.from_results(results([c])).entries[0]
    assert entry.environment["device_model"] == "Other SSD"
    assert entry.environment["host"] == "ci-7"


def test_target_facts_stand_in_for_the_short_names():
    c = case("s::a", **{"read.iops": 1.0})
    c["environment"] = {"target.device_model": "Disk Z", "target.firmware": "7"}
    env = {k: v for k, v in ENV.items() if k not in ("device_model", "firmware")}
    entry = Baseline.from_results(results([c], env)).entries[0]
    assert (entry.environment["device_model"], entry.environment["firmware"]) == ("Disk Z", "7")


def test_missing_environment_facts_are_none():
    base = Baseline.from_results({"schema_version": 1,
                                  "cases": [case("s::a", **{"read.iops": 1.0})]})
    assert base.entries[0].environment == dict.fromkeys(
        ("device_model", "firmware", "host", "kernel", "iogate_version"))


def test_save_load_round_trip(tmp_path):
    doc = results([case("s::a", samples={"read.iops": [1.0, 2.0, 3.0]}, **{"read.iops": 2.0}),
                   case("s::b", **{"write.clat.p99": 12345.0})])
    base = Baseline.from_results(doc)
    path = tmp_path / "base.json"
    base.save(path)
    loaded = Baseline.load(path)
    assert [e.to_json() for e in loaded.entries] == [e.to_json() for e in base.entries]
    on_disk = json.loads(path.read_text())
    assert on_disk["format"] == "iogate-baseline"
    assert on_disk["version"] == 1
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_save_replaces_atomically_and_reports_unwritable(tmp_path):
    path = tmp_path / "base.json"
    path.write_text("old contents")
    Baseline([Entry("s::a", {}, {"read.iops": 1.0})]).save(path)
    assert Baseline.load(path).entries[0].value("read.iops") == 1.0
    with pytest.raises(BaselineError, match="no-such-dir"):
        Baseline().save(tmp_path / "no-such-dir" / "b.json")


def _entry(case_id, firmware, host="ci-7", iops=1.0):
    return Entry(case_id, {"device_model": "M", "firmware": firmware, "host": host,
                           "kernel": "6.8", "iogate_version": "0.1.0"}, {"read.iops": iops})


def test_choose_the_exact_entry_else_the_closest_else_refuse():
    base = Baseline([_entry("s::a", "1.0", iops=1.0), _entry("s::a", "2.0", iops=2.0),
                     _entry("s::b", "1.0", iops=3.0)])
    want = {"device_model": "M", "firmware": "2.0", "host": "ci-7", "kernel": "6.8",
            "iogate_version": "0.1.0"}
    exact = base.choose("s::a", want)
    assert exact.entry.value("read.iops") == 2.0
    assert exact.warning() is None
    # Two entries for s::a and neither has firmware 3.0: equally close, no guess.
    with pytest.raises(BaselineMatchError, match=r"2 entries for case 's::a' are equally "
                                                 r"close.*differ in firmware") as info:
        base.choose("s::a", {**want, "firmware": "3.0"})
    assert "firmware=1.0 host=ci-7" in str(info.value)
    # One entry for s::b: it is used, and what differs is said.
    other = base.choose("s::b", {**want, "firmware": "3.0"})
    assert other.entry.value("read.iops") == 3.0
    assert other.differs == {"firmware": ("1.0", "3.0")}
    assert "firmware '1.0' in the baseline, '3.0' in this run" in (other.warning() or "")
    two = base.choose("s::b", {**want, "firmware": "3.0", "host": "lab"}).warning() or ""
    assert two.endswith("say so with --baseline-match firmware=1.0,host=ci-7)")
    # The closest wins: on host ci-7 the ci-7 entry, though its firmware differs.
    two_hosts = Baseline([_entry("s::a", "1.0", host="lab", iops=1.0),
                          _entry("s::a", "1.0", iops=2.0)])
    closest = two_hosts.choose("s::a", {**want, "firmware": "9"})
    assert closest.entry.value("read.iops") == 2.0
    assert closest.candidates == 2
    assert "the closest of 2 entries" in (closest.warning() or "")
    with pytest.raises(BaselineMatchError, match="no entry for case 's::zzz'; record one"):
        base.choose("s::zzz", want)


def test_choose_with_criteria():
    base = Baseline([_entry("s::a", "1.0", iops=1.0), _entry("s::a", "2.0", iops=2.0)])
    here = {"device_model": "M", "firmware": "3.0", "host": "ci-7", "kernel": "6.8",
            "iogate_version": "0.1.0"}
    chosen = base.choose("s::a", here, {"firmware": "1.0"})
    assert chosen.entry.value("read.iops") == 1.0
    assert chosen.warning() is None  # the firmware differs as asked
    with pytest.raises(BaselineMatchError, match=r"no entry for case 's::a' recorded with "
                                                 r"firmware=9\.9; the file holds entries for "
                                                 r"case 's::a' recorded with"):
        base.choose("s::a", here, {"firmware": "9.9"})
    base.select({"firmware": "2.0", "host": "ci-7"})
    with pytest.raises(BaselineMatchError, match=r"(?s)no entry is recorded with firmware=9\.9; "
                                                 r"the file holds .*\(1 case\)"):
        base.select({"firmware": "9.9"})


def test_parse_match():
    assert parse_match(["firmware=1.2"]) == {"firmware": "1.2"}
    assert parse_match(["firmware=1.2,host=a", "kernel=6.8"]) == {
        "firmware": "1.2", "host": "a", "kernel": "6.8"}
    # A comma not followed by a key stays in the value; an empty value is "not recorded".
    assert parse_match(["device_model=Disk, rev B,firmware="]) == {
        "device_model": "Disk, rev B", "firmware": None}
    assert parse_match(["host=a", "host=a"]) == {"host": "a"}
    with pytest.raises(ValueError, match=r"unknown key 'cpu'.*device_model, firmware, host"):
        parse_match(["cpu=8"])
    with pytest.raises(ValueError, match="'firmware' is not KEY=VALUE"):
        parse_match(["firmware"])
    with pytest.raises(ValueError, match="host is asked for twice"):
        parse_match(["host=a", "host=b"])


def test_merge_replaces_same_key_and_keeps_the_rest():
    old = Baseline([_entry("s::a", "1.0", iops=1.0), _entry("s::b", "1.0", iops=2.0)])
    new = Baseline([_entry("s::a", "1.0", iops=10.0), _entry("s::a", "2.0", iops=20.0)])
    merged = old.merge(new)
    assert [(e.case_id, e.environment["firmware"], e.value("read.iops"))
            for e in merged.entries] == [("s::a", "1.0", 10.0), ("s::b", "1.0", 2.0),
                                         ("s::a", "2.0", 20.0)]
    assert len(old) == 2
    assert old.entries[0].value("read.iops") == 1.0  # inputs unchanged


GOOD_ENTRY = {"case": "s::a", "environment": {}, "metrics": {"read.iops": 1.0}}


@pytest.mark.parametrize(("content", "reason"), [
    ("{not json", "not JSON"),
    ("[1, 2]", "top level is not an object"),
    (json.dumps({"schema_version": 1, "cases": []}), "results document"),
    (json.dumps({"format": "something-else", "version": 1}), "format is 'something-else'"),
    (json.dumps({"format": "iogate-baseline", "version": 7, "entries": []}),
     "version 7 is not supported"),
    (json.dumps({"format": "iogate-baseline", "version": 1, "entries": {}}),
     "'entries' must be a list"),
    (json.dumps({"format": "iogate-baseline", "version": 1, "entries": [3]}),
     r"entries\[0\]: an entry must be an object"),
    (json.dumps({"format": "iogate-baseline", "version": 1,
                 "entries": [{"metrics": {}}]}), "'case' must be a non-empty string"),
    (json.dumps({"format": "iogate-baseline", "version": 1,
                 "entries": [{**GOOD_ENTRY, "metrics": {"read.iops": "fast"}}]}),
     "metrics.read.iops must be a finite number"),
    (json.dumps({"format": "iogate-baseline", "version": 1,
                 "entries": [{**GOOD_ENTRY, "samples": {"read.iops": []}}]}),
     "samples.read.iops must be a non-empty list"),
    (json.dumps({"format": "iogate-baseline", "version": 1,
                 "entries": [{**GOOD_ENTRY, "environment": {"host": ["x"]}}]}),
     "environment.host must be a string"),
    (json.dumps({"format": "iogate-baseline", "version": 1,
                 "entries": [GOOD_ENTRY, GOOD_ENTRY]}), "a second entry for case 's::a'"),
    (json.dumps({"format": "iogate-baseline", "version": 1,
                 "entries": [{**GOOD_ENTRY, "metrics": {"read.iops": -1.0}}]}),
     r"entries\[0\] \(s::a\): metrics.read.iops is -1: a measured read.iops is never negative"),
    (json.dumps({"format": "iogate-baseline", "version": 1,
                 "entries": [{**GOOD_ENTRY, "metrics": {"write.bw": -2}}]}),
     "metrics.write.bw is -2"),
    (json.dumps({"format": "iogate-baseline", "version": 1,
                 "entries": [{**GOOD_ENTRY, "samples": {"read.clat.p99": [5.0, -3.0]}}]}),
     "samples.read.clat.p99 is -3"),
    ('{"format": "iogate-baseline", "version": 1, "entries": [{"case": "s::a", '
     '"metrics": {"read.clat.mean": NaN}}]}', "metrics.read.clat.mean must be a finite number"),
    (json.dumps({"format": "iogate-baseline", "version": 1,
                 "entries": [{**GOOD_ENTRY, "metrics": {"read.clat.p50": 9e6,
                                                        "read.clat.p99": 2e6,
                                                        "read.clat.p99.9": 3e6}}]}),
     r"metrics.read.clat.p50 \(9e\+06\) is above metrics.read.clat.p99 \(2e\+06\)"),
])
def test_corrupt_and_foreign_files_are_named_with_the_reason(tmp_path, content, reason):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(BaselineError, match=reason) as info:
        Baseline.load(path)
    assert str(info.value).startswith(f"{path}: ")
    assert isinstance(info.value, IogateError)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(BaselineError, match=r"nope\.json: no such file"):
        Baseline.load(tmp_path / "nope.json")
    with pytest.raises(BaselineError, match="is a directory"):
        Baseline.load(tmp_path)


def test_binary_file_is_not_a_traceback(tmp_path):
    path = tmp_path / "b.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(BaselineError, match=r"b\.json: "):
        Baseline.load(path)


def test_from_results_rejects_non_results():
    with pytest.raises(BaselineError, match="no 'cases' list"):
        Baseline.from_results({"format": "iogate-baseline"})


@pytest.mark.parametrize(("version", "said"), [(2, "has schema_version 2"),
                                               (None, "has no schema_version"),
                                               ("1", "has schema_version '1'")])
def test_from_results_refuses_an_unknown_schema_version(version, said):
    doc = results([case("s::a", **{"read.iops": 1.0})])
    doc["schema_version"] = version
    with pytest.raises(BaselineError, match=f"r.json: the results document {said}; this "
                                            "iogate reads schema_version 1"):
        Baseline.from_results(doc, "r.json")


def test_plugin_metrics_may_be_negative():
    entry = {**GOOD_ENTRY, "metrics": {"read.iops": 1.0, "thermal.delta_c": -4.0}}
    base = Baseline.from_document({"format": "iogate-baseline", "version": 1,
                                   "entries": [entry]})
    assert base.entries[0].value("thermal.delta_c") == -4.0


# -- what a baseline holds: the cases that passed -----------------------------------------------

def _mixed():
    return results([case("s::ok", **{"read.iops": 1.0}),
                    case("s::slow", "failed", **{"read.iops": 2.0}),
                    case("s::err", "error", **{"read.iops": 3.0}),
                    case("s::skip", "skipped")])


def test_record_stores_what_passed_and_names_what_it_left_out(tmp_path):
    from iogate.baseline import LeftOut, left_out_text, record

    path = str(tmp_path / "base.json")
    stored, left = record(path, _mixed())
    assert stored == 1
    assert [e.case_id for e in Baseline.load(path).entries] == ["s::ok"]
    assert left == [LeftOut("s::slow", "failed"), LeftOut("s::err", "error"),
                    LeftOut("s::skip", "skipped")]
    assert left_out_text(path, left, "--save-baseline-all") == (
        f"{path}: 3 cases left out of the baseline:\n"
        "  s::slow: failed (a baseline holds what passed; --save-baseline-all records failed "
        "cases too)\n"
        "  s::err: error (not measured in full)\n"
        "  s::skip: skipped (not run)")
    assert left_out_text(path, [], "--all") is None


def test_record_failed_stores_every_case_measured_in_full_into_the_file(tmp_path):
    from iogate.baseline import LeftOut, record

    path = str(tmp_path / "base.json")
    record(path, results([case("s::other", **{"read.iops": 9.0})]))
    stored, left = record(path, _mixed(), include_failed=True)
    assert stored == 2
    assert left == [LeftOut("s::err", "error"), LeftOut("s::skip", "skipped")]
    assert [e.case_id for e in Baseline.load(path).entries] == ["s::other", "s::ok", "s::slow"]


def test_from_results_still_takes_failed_cases_for_compare_and_history():
    assert [e.case_id for e in Baseline.from_results(_mixed()).entries] == ["s::ok", "s::slow"]


def _results_file(tmp_path, document):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(document))
    return str(path)


def test_promote_merges_the_cases_selected_into_the_baseline(tmp_path):
    from iogate.baseline import LeftOut, promote, record

    out = str(tmp_path / "base.json")
    record(out, results([case("s::other", **{"read.iops": 9.0})]))
    source = _results_file(tmp_path, _mixed())
    merged, taken, left = promote(source, out)
    assert taken == 1
    assert [e.case_id for e in merged.entries] == ["s::other", "s::ok"]
    assert LeftOut("s::slow", "failed") in left
    assert [e.case_id for e in Baseline.load(out).entries] == ["s::other"]  # not saved yet
    merged, taken, left = promote(source, out, include_failed=True, select="slow")
    assert taken == 1
    assert left == []
    assert [e.case_id for e in merged.entries] == [
        "s::other", "s::slow"]


@pytest.mark.parametrize(("kwargs", "reason"), [
    ({"select": "nothing"}, "r.json: no case matches -k 'nothing'"),
    ({"select": "slow"}, "r.json: nothing to promote: s::slow: failed (a baseline holds what "
                         "passed; --all records failed cases too)"),
    ({"select": "err", "include_failed": True},
     "nothing to promote: s::err: error (not measured in full)"),
])
def test_promote_refuses_when_nothing_can_be_taken(tmp_path, kwargs, reason):
    from iogate.baseline import promote

    source = _results_file(tmp_path, _mixed())
    with pytest.raises(BaselineError) as info:
        promote(source, str(tmp_path / "base.json"), **kwargs)
    assert str(info.value).endswith(reason)


def test_promote_names_a_results_file_it_cannot_use(tmp_path):
    from iogate.baseline import promote

    with pytest.raises(BaselineError, match=r"r\.json: no such file"):
        promote(str(tmp_path / "r.json"), str(tmp_path / "base.json"))
    source = _results_file(tmp_path, {"format": "iogate-baseline"})
    with pytest.raises(BaselineError, match="not a results document: no 'cases' list"):
        promote(source, str(tmp_path / "base.json"))
