"""The metric table is the one definition: paths, kinds, computations and fio's coverage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from iogate import metrics
from iogate.metrics import TABLE, Form, parse_metric, standard_paths
from iogate.results import RunResult


def test_every_row_is_computed_by_the_results() -> None:
    for family in TABLE:
        assert callable(getattr(RunResult, "_m_" + family.compute, None)), family


def test_every_computation_belongs_to_a_row() -> None:
    computed = {name[3:] for name in vars(RunResult) if name.startswith("_m_")}
    assert computed == {f.compute for f in TABLE}


def test_every_standard_path_parses_to_its_row() -> None:
    for text in standard_paths():
        path = parse_metric(text)
        assert path.family in TABLE
        assert path.kind is path.family.kind
        assert path.text == text


def test_each_path_is_in_one_row_and_every_row_has_paths() -> None:
    seen: set[tuple[str, str]] = set()
    for family in TABLE:
        pairs = {(s, n) for s in family.scopes for n in family.names}
        assert pairs
        assert not pairs & seen
        seen |= pairs


@pytest.mark.parametrize("family", TABLE, ids=metrics.pattern)
def test_the_printed_pattern_parses(family: metrics.Family) -> None:
    scope = family.scopes[0]
    name = family.names[0]
    tail = {Form.PLAIN: "", Form.LATENCY: ".p99.9", Form.MEAN: ".mean",
            Form.SIZE: ".4096"}[family.form]
    text = f"{scope}.{name}{tail}" if scope else name
    assert parse_metric(text).family is family
    assert metrics.describe(parse_metric(text))


def test_an_unknown_name_is_still_refused_with_a_hint() -> None:
    with pytest.raises(ValueError, match=r"did you mean 'read\.iops'"):
        parse_metric("read.iopz")


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_fio_measures_exactly_the_rows_that_name_its_source(tmp_path: Path) -> None:
    """A real fio run: every metric of a row without a fio source is not measured, every
    row with one that a plain read job exercises is."""
    from iogate.fio.backend import run
    from iogate.job import JobSpec

    target = tmp_path / "f.dat"
    target.write_bytes(b"\0" * (1 << 20))
    spec = JobSpec(engine="psync", rw="randread", size=1 << 20, filename=str(target))
    result = run([spec]).result
    measured = result.metrics()
    for text in standard_paths():
        family = parse_metric(text).family
        if family.fio is None:
            assert text not in measured, text
    for text in ("read.iops", "read.bw", "read.ios", "read.bytes", "read.runtime",
                 "read.clat.p99", "read.lat.mean", "read.bs.mean", "mix.read_pct", "errors",
                 "cpu.user"):
        assert text in measured, text


def test_the_command_lists_every_row(capsys: pytest.CaptureFixture[str]) -> None:
    from iogate.cli import main

    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 120  # not a terminal: a log
    words = " ".join(out.split())  # a long text goes on lines of its own, wrapped
    for family in TABLE:
        assert metrics.pattern(family) in out
        assert " ".join(family.about.split()) in words


def _accepted(key: str) -> bool:
    try:
        path, _ = metrics.split_statistic(key)
        parse_metric(path)
    except ValueError:
        return False
    return True


_TOKENS = ["read", "total", "sync", "cpu", "errors", "iops", "clat", "bs_pct", "mean",
           "p99.9", "p0", "0", "util_pct"]


@pytest.mark.parametrize("key", [
    "read.clat.p99", "read.clat.p99.999", "read.iops@min", "errors", "errors@cv",
    "read.bs_pct.4096", "read.bs_pct.0", "sync.clat.mean", "total.clat.p99", "read.clat",
    "read.iops@p90", "cpu.util_pct", "verify.read_errors", "write.qd.mean", "write.qd.max",
    "read.clat.p0", "read.clat.p00.0", "read.clat.p0.5", "read.clat.p0@min", "read.clat.p100",
    "read.clat.p100.0", "read.iopz", "mix.read_pct.x"])
def test_the_schema_keys_are_the_loaders(key: str) -> None:
    import re

    matched = any(re.search(regex, key) for regex, _ in metrics.key_patterns())
    assert matched == _accepted(key), key


def test_the_schema_keys_are_the_loaders_for_any_key() -> None:
    """Every key of up to four tokens of the metric vocabulary, with or without a statistic:
    the schema's patterns accept exactly what the loader accepts."""
    import itertools
    import re

    patterns = [re.compile(regex) for regex, _ in metrics.key_patterns()]
    for n in (1, 2, 3):
        for parts in itertools.product(_TOKENS, repeat=n):
            for suffix in ("", "@min", "@p50"):
                key = ".".join(parts) + suffix
                assert any(p.search(key) for p in patterns) == _accepted(key), key


def test_the_schema_names_every_standard_path_with_its_meaning() -> None:
    from iogate.spec.schema import json_schema

    keys = json_schema()["$defs"]["Expectations"]
    assert set(keys["properties"]) == set(standard_paths())
    assert keys["properties"]["read.clat.p99"]["description"].startswith(
        "read.clat.p99, the 99th percentile: submission, completion")
    assert keys["properties"]["read.iops"]["description"].startswith("requests per second")
    assert keys["additionalProperties"] is False
