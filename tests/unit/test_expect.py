"""Expectations: grammar, units per metric kind, messages, verdicts."""

import math

import pytest

from iogate.expect import (
    Check,
    ExpectationError,
    evaluate,
    evaluate_window,
    format_value,
    parse_expectation,
)
from iogate.metrics import Kind

MiB = 1 << 20


@pytest.mark.parametrize(("metric", "text", "op", "threshold"), [
    ("read.clat.p99", "<= 1.2ms", "<=", 1_200_000),
    ("read.clat.p99.9", "< 5ms", "<", 5_000_000),
    ("write.lat.mean", ">=250us", ">=", 250_000),
    ("read.clat.p99", "<= 1.2 ms", "<=", 1_200_000),
    ("read.iops", ">= 250k", ">=", 250_000),
    ("total.iops", "> 1.5M", ">", 1_500_000),
    ("errors", "== 0", "==", 0),
    ("read.ios", "!= 0", "!=", 0),
    ("write.bw", "< 400MiB/s", "<", 400 * MiB),
    ("total.bw", ">= 1GiB/s", ">=", 1 << 30),
    ("read.bytes", ">= 1GiB", ">=", 1 << 30),
    ("read.runtime", ">= 10s", ">=", 10 * 10**9),
])
def test_parse(metric, text, op, threshold):
    exp = parse_expectation(metric, text)
    assert (exp.metric.text, exp.op, exp.literal, exp.text) == (metric, op, threshold,
                                                                 text.strip())
    assert exp.threshold() == threshold
    assert exp.names == frozenset()


@pytest.mark.parametrize(("metric", "text", "message"), [
    ("read.clat.p99", "<= 250k",
     "'250k' is a count, but read.clat.p99 is a latency; write e.g. '<= 1.2ms'"),
    ("read.clat.p99", "<= 5", "'5' has no unit, but read.clat.p99 is a latency"),
    ("read.iops", ">= 4KiB", "'4KiB' is a size, but read.iops is an IOPS figure; "
                             "write e.g. '>= 250k'"),
    ("read.iops", ">= 2ms", "'2ms' is a duration, but read.iops is an IOPS figure"),
    ("read.bw", ">= 400MiB", "'400MiB' is a size, but read.bw is a bandwidth; "
                             "write e.g. '>= 400MiB/s'"),
    ("read.bw", ">= 400MB/s", "ambiguous unit 'MB/s': write '400MiB/s'"),
    ("read.iops", ">= 1m", "ambiguous unit 'm' in '1m': write 'M' for millions"),
    ("read.runtime", "> 5k", "'5k' is a count, but read.runtime is a duration"),
    ("read.clat.p99", "<= 10Q", "unknown duration unit 'Q'"),
    ("read.clatt.p99", "<= 1ms", "unknown metric 'read.clatt.p99'"),
    ("read.clat.p101", "<= 1ms", "unknown metric 'read.clat.p101'"),
    ("reads.iops", ">= 1k", "unknown metric 'reads.iops'"),
    ("read.iops", 250000, "write a comparison like '>= 250k'"),
    ("read.clat.p99", 1.5, "write a comparison like '<= 1.2ms'"),
    ("read.iops", True, "write a comparison like"),
    ("read.iops", "250k", "must start with one of >= <= > < == !="),
    ("read.iops", ">=", "ends too early"),
    ("read.iops", ">= 250k +", "'>= 250k +': expected a number, found the end"),
    ("read.iops", ">= baselin", "unknown name 'baselin'; an expectation may refer to "
                                "baseline, history and mean; did you mean 'baseline'?"),
    ("read.iops", ">= 1k 2k", "'>= 1k 2k': expected an operator, found '2k'"),
    ("read.iops", "=> 1k", "must start with one of"),
    ("read.iops", ">= #", "unexpected '#'"),
])
def test_parse_errors(metric, text, message):
    with pytest.raises(ExpectationError) as exc:
        parse_expectation(metric, text)
    assert message in str(exc.value)


@pytest.mark.parametrize(("metric", "text", "described"), [
    ("read.clat.p99", "<=1.2ms", "<= 1.2ms"), ("read.iops", ">= 250000", ">= 250k"),
    ("write.bw", "< 400MiB/s", "< 400MiB/s"), ("errors", "== 0", "== 0"),
    ("read.bytes", ">= 1GiB", ">= 1GiB"),
])
def test_describe(metric, text, described):
    assert parse_expectation(metric, text).describe() == described


@pytest.mark.parametrize(("text", "observed", "passed"), [
    (">= 100", 100, True), (">= 100", 99.9, False), ("> 100", 100, False), ("> 100", 101, True),
    ("<= 100", 100, True), ("<= 100", 100.1, False), ("< 100", 100, False), ("< 100", 0, True),
    ("== 100", 100, True), ("== 100", 101, False), ("!= 100", 100, False), ("!= 100", 7, True),
])
def test_each_operator(text, observed, passed):
    check = evaluate(parse_expectation("read.iops", text), observed)
    assert isinstance(check, Check)
    assert check.passed is passed
    assert check.observed == observed


def test_reasons():
    exp = parse_expectation("read.clat.p99", "<= 1.2ms")
    assert evaluate(exp, 1_350_000).reason == "1.35ms is not <= 1.2ms"
    assert evaluate(exp, 900_000).reason == "900us <= 1.2ms"


@pytest.mark.parametrize(("metric", "reason"), [
    ("read.iops", "not measured: the workload did no reads"),
    ("write.clat.p99", "not measured: the workload did no writes"),
    ("total.iops", "not measured: the workload did no I/O"),
])
def test_not_measured_fails(metric, reason):
    exp = parse_expectation(metric, "<= 1ms" if "clat" in metric else ">= 0")
    check = evaluate(exp, None)
    assert (check.passed, check.observed, check.reason) == (False, None, reason)


@pytest.mark.parametrize(("metric", "backend", "reason"), [
    ("read.resp.p99", "fio", "not measured: fio does not measure resp (the native backend does)"),
    ("read.clat.p99", "fio", "not measured: the workload did no reads"),
    ("read.resp.p99", "native", "not measured: the workload did no reads"),
])
def test_not_measured_by_the_backend_says_so(metric, backend, reason):
    check = evaluate(parse_expectation(metric, "<= 1ms"), None, backend=backend)
    assert (check.passed, check.reason) == (False, reason)


def test_nan_fails_even_for_not_equal():
    check = evaluate(parse_expectation("read.iops", "!= 5"), math.nan)
    assert not check.passed
    assert "not a number" in check.reason


@pytest.mark.parametrize(("kind", "value", "text"), [
    (Kind.DURATION, 1_200_000, "1.2ms"), (Kind.IOPS, 250_300, "250.3k"), (Kind.COUNT, 3, "3"),
    (Kind.BANDWIDTH, 412 * MiB, "412MiB/s"), (Kind.BYTES, 4096, "4KiB"),
])
def test_format_value(kind, value, text):
    assert format_value(kind, value) == text


@pytest.mark.parametrize(("metric", "text", "threshold", "described"), [
    ("mix.read_pct", ">= 69%", 69, ">= 69%"),
    ("mix.read_pct", "<= 71.5", 71.5, "<= 71.5%"),
    ("read.bs_pct.4096", ">= 79 %", 79, ">= 79%"),
    ("total.rate_pct", ">= 98%", 98, ">= 98%"),
    ("offsets.coverage_pct", ">= 99.9%", 99.9, ">= 99.9%"),
    ("data.dedupe_pct", "<= 0.5%", 0.5, "<= 0.5%"),
    ("data.compress_ratio", "<= 0.55", 0.55, "<= 0.55"),
    ("read.qd.mean", ">= 7.5", 7.5, ">= 7.5"),
    ("write.bs.mean", ">= 4KiB", 4096, ">= 4KiB"),
    ("read.resp.p99", "<= 2ms", 2_000_000, "<= 2ms"),
    ("write.lag.max", "< 1s", 10**9, "< 1s"),
    ("sync.lat.p99", "<= 5ms", 5_000_000, "<= 5ms"),
    ("sync.clat.mean", "<= 5ms", 5_000_000, "<= 5ms"),
    ("sync.ios", ">= 10", 10, ">= 10"),
])
def test_parse_new_kinds(metric, text, threshold, described):
    exp = parse_expectation(metric, text)
    assert exp.literal == pytest.approx(threshold)
    assert exp.describe() == described
    assert exp.metric.text == metric


@pytest.mark.parametrize(("metric", "text", "message"), [
    ("data.compress_ratio", "<= 50%", "'50%' is a percentage, but data.compress_ratio is a "
                                      "plain number; write e.g. '<= 0.55'"),
    ("data.compress_ratio", "<= 1k", "'1k' is a count, but data.compress_ratio is a plain"),
    ("mix.read_pct", ">= 5ms", "'5ms' is a duration, but mix.read_pct is a percentage; "
                               "write e.g. '<= 5%'"),
    ("read.iops", ">= 5%", "'5%' is a percentage, but read.iops is an IOPS figure"),
    ("read.qd.mean", ">= 4KiB", "'4KiB' is a size, but read.qd.mean is a plain number"),
    ("read.bs_pct", ">= 5%", "say which block size in bytes, e.g. read.bs_pct.4096"),
    ("read.bs_pct.4k", ">= 5%", "say which block size in bytes"),
    ("total.bs_pct.4096", ">= 5%", "'bs_pct' is per direction"),
    ("total.resp.p99", "<= 1ms", "'resp' is per direction"),
    ("read.qd.max", ">= 1", "'read.qd' has one statistic: read.qd.mean"),
    ("mix.write_pct", ">= 1", "'mix' has read_pct"),
    ("sync.slat.p99", "<= 1ms", "sync calls have ios and a latency"),
    ("data.compress_ratio.mean", "<= 1", "takes no further part"),
    ("read.rsp.p99", "<= 1ms", "did you mean 'read.resp.p99'?"),
    ("mix.read_pc", ">= 1", "did you mean 'mix.read_pct'?"),
])
def test_new_paths_and_kinds_reject_with_advice(metric, text, message):
    with pytest.raises(ExpectationError) as exc:
        parse_expectation(metric, text)
    assert message in str(exc.value)


@pytest.mark.parametrize(("kind", "value", "text"), [
    (Kind.PERCENT, 5.2, "5.2%"), (Kind.PERCENT, 81.234, "81.2%"), (Kind.PERCENT, 100, "100%"),
    (Kind.PERCENT, 0.0512, "0.0512%"), (Kind.PERCENT, 0, "0%"),
    (Kind.NUMBER, 0.50312, "0.503"), (Kind.NUMBER, 7.0, "7"), (Kind.NUMBER, 1234.4, "1234"),
])
def test_format_new_kinds(kind, value, text):
    assert format_value(kind, value) == text


@pytest.mark.parametrize(("metric", "reason"), [
    ("read.rate_pct", "not measured: no read rate was requested"),
    ("data.compress_ratio", "not measured: no written data was sampled"),
    ("sync.lat.p99", "not measured: the workload made no sync calls"),
    ("mix.read_pct", "not measured: the workload did no I/O"),
    ("read.bs_pct.4096", "not measured: the workload did no reads"),
])
def test_new_metrics_not_measured(metric, reason):
    exp = parse_expectation(metric, "<= 1ms" if "lat" in metric else ">= 0")
    check = evaluate(exp, None)
    assert not check.passed
    assert check.reason.startswith(reason)


def test_percent_verdicts():
    exp = parse_expectation("read.bs_pct.4096", ">= 79.5%")
    assert evaluate(exp, 80.1).reason == "80.1% >= 79.5%"
    assert evaluate(exp, 75.0).reason == "75% is not >= 79.5%"


# -- expressions, names, statistics, windows ----------------------------------------------

@pytest.mark.parametrize(("metric", "text", "names", "threshold"), [
    ("read.iops", ">= 0.95 * baseline", {"baseline": 200_000}, 190_000),
    ("read.clat.p99", "<= baseline + 10%", {"baseline": 2_000_000}, 2_200_000),
    ("read.clat.p99", "<= baseline - 10%", {"baseline": 2_000_000}, 1_800_000),
    ("read.iops", ">= 90% * baseline", {"baseline": 1000}, 900),
    ("read.bw", ">= baseline - 50MiB/s", {"baseline": 100 * MiB}, 50 * MiB),
    ("read.clat.p99", "<= (baseline + 1ms) / 2", {"baseline": 3_000_000}, 2_000_000),
    ("mix.read_pct", ">= baseline - 1%", {"baseline": 70}, 69),  # points for percent metrics
    ("read.iops", ">= 250k + 5", {}, 250_005),
    ("read.clat.p99", "<= 32 * 100us", {}, 3_200_000),
    ("read.clat.p99", "<= 1ms + 10%", {}, 1_100_000),
])
def test_expression_thresholds(metric, text, names, threshold):
    exp = parse_expectation(metric, text)
    assert exp.threshold(names) == pytest.approx(threshold)
    assert exp.names == frozenset(names)
    assert (exp.literal is None) == bool(names)


# The types of a threshold: a plain number, a share (10%), or a value of the metric. The names
# are values of the metric whatever its unit (an IOPS figure, a count and a ratio included),
# and so is a literal with a unit (250k, 1ms); the threshold must come out a value of the
# metric, or a plain number written as one (read in the metric's bare unit, '>= 5').
@pytest.mark.parametrize(("metric", "text", "message"), [
    ("read.iops", ">= baseline * baseline",
     "'baseline * baseline' multiplies an IOPS figure by an IOPS figure; one side must be a "
     "plain number"),
    ("read.iops", ">= 1k * baseline", "multiplies an IOPS figure by an IOPS figure"),
    ("read.iops", ">= 250k * 2k", "multiplies an IOPS figure by an IOPS figure"),
    ("errors", "<= baseline * baseline", "multiplies a count by a count"),
    ("data.compress_ratio", "<= baseline * baseline", "multiplies a plain number by a plain"),
    ("mix.read_pct", ">= baseline * baseline", "multiplies a percentage by a percentage"),
    ("read.bw", ">= baseline * baseline", "multiplies a bandwidth by a bandwidth"),
    ("read.iops", ">= 2 / baseline", "divides a plain number by an IOPS figure"),
    ("read.iops", ">= baseline / baseline",
     "'baseline / baseline' is a ratio, not an IOPS figure: an IOPS figure divided by an IOPS "
     "figure has no unit; multiply it by an IOPS figure"),
    ("read.bw", ">= baseline / 1MiB/s", "is a ratio, not a bandwidth"),
    ("read.clat.p99", "<= baseline / baseline", "is a ratio, not a duration"),
    ("read.iops", ">= 0.8 * mean * mean in all", "multiplies an IOPS figure by an IOPS figure"),
])
def test_a_threshold_must_be_a_value_of_the_metric(metric, text, message):
    with pytest.raises(ExpectationError) as info:
        parse_expectation(metric, text)
    assert message in str(info.value)


@pytest.mark.parametrize(("metric", "text", "names", "threshold"), [
    ("read.iops", ">= baseline * (1k / 1k)", {"baseline": 1000}, 1000),  # a ratio as a factor
    ("read.iops", ">= baseline / 2 + 5", {"baseline": 1000}, 505),  # 5 is 5 IOPS
    ("errors", "<= baseline + 1", {"baseline": 3}, 4),
    ("data.compress_ratio", "<= baseline * 1.1", {"baseline": 2}, 2.2),
    ("read.iops", ">= 250k / 2", {}, 125_000),
    ("read.iops", ">= 5", {}, 5),
    ("read.iops", ">= (baseline + 1k) / 2", {"baseline": 3000}, 2000),
])
def test_thresholds_that_are_values_of_the_metric(metric, text, names, threshold):
    assert parse_expectation(metric, text).threshold(names) == pytest.approx(threshold)


def test_a_missing_name_is_an_error_and_a_failed_check():
    exp = parse_expectation("read.iops", ">= 0.95 * baseline")
    with pytest.raises(ExpectationError, match=r"read\.iops >= 0\.95 \* baseline refers to "
                                               r"baseline, but no baseline is loaded"):
        exp.threshold()
    check = evaluate(exp, 250_000)
    assert not check.passed
    assert check.reason.startswith("not judged: read.iops >= 0.95 * "
                                                        "baseline refers to baseline")
    ok = evaluate(exp, 250_000, names={"baseline": 250_000})
    assert ok.passed
    assert ok.threshold == 237_500
    assert ok.reason == "250k >= 0.95 * baseline (237.5k)"
    assert exp.describe() == ">= 0.95 * baseline"


@pytest.mark.parametrize(("metric", "stat", "kind"), [
    ("read.iops", "median", Kind.IOPS), ("read.iops@min", "min", Kind.IOPS),
    ("read.iops@max", "max", Kind.IOPS), ("read.clat.p99@mean", "mean", Kind.DURATION),
    ("read.clat.p99@median", "median", Kind.DURATION), ("read.iops@cv", "cv", Kind.PERCENT),
])
def test_statistic_selector(metric, stat, kind):
    exp = parse_expectation(metric, "<= 5%" if stat == "cv" else (
        ">= 1k" if kind is Kind.IOPS else "<= 1ms"))
    assert (exp.stat, exp.kind, exp.key) == (stat, kind, metric.replace("@median", ""))


def test_cv_takes_a_percentage():
    with pytest.raises(ExpectationError, match=r"'1ms' is a duration, but read\.clat\.p99 is a "
                                               r"percentage"):
        parse_expectation("read.clat.p99@cv", "<= 1ms")
    assert evaluate(parse_expectation("read.iops@cv", "<= 5%"), 3.2).reason == "3.2% <= 5%"


@pytest.mark.parametrize(("text", "share", "interval", "described"), [
    ("<= 2ms in 99% of 1s", 0.99, 10**9, "<= 2ms in 99%"),
    ("<= 2ms in 99.5% of 250ms", 0.995, 250_000_000, "<= 2ms in 99.5% of 250ms"),
    (">= 200 in 95%", 0.95, 10**9, ">= 200 in 95%"),
    (">= 0.8 * mean in all", 1.0, 10**9, ">= 0.8 * mean in all"),
    (">= 1k in 100% of 10ms", 1.0, 10_000_000, ">= 1k in 100% of 10ms"),
])
def test_windows(text, share, interval, described):
    metric = "read.clat.p99" if "ms in" in text else "read.iops"
    exp = parse_expectation(metric, text)
    assert exp.window is not None
    assert (exp.window.share, exp.window.interval_ns, exp.describe()) == (share, interval,
                                                                          described)


def test_evaluate_window_counts_intervals():
    exp = parse_expectation("read.clat.p99", "<= 2ms in 99% of 1s")
    check = evaluate_window(exp, [1e6] * 97 + [3e6] * 3, None)
    assert (check.passed, check.observed, check.intervals, check.observed_kind) == (
        False, 97.0, 100, Kind.PERCENT)
    assert check.reason == "97.0% of 100 intervals had read.clat.p99 <= 2ms, 99% needed"
    assert evaluate_window(exp, [1e6] * 99 + [3e6], None).passed


def test_evaluate_window_mean_is_the_whole_run():
    exp = parse_expectation("read.iops", ">= 0.8 * mean in all")
    check = evaluate_window(exp, [1000, 900, 810], 1000)
    assert check.passed
    assert check.threshold == 800
    assert check.reason == "100.0% of 3 intervals had read.iops >= 800, 100% needed"
    assert not evaluate_window(exp, [1000, 900, 790], 1000).passed
    unmeasured = evaluate_window(exp, [1000], None)
    assert not unmeasured.passed
    assert "mean, but the whole-run value was not measured" in \
        unmeasured.reason


def test_evaluate_window_without_intervals_fails():
    check = evaluate_window(parse_expectation("read.iops", ">= 1 in 50%"), [], 5.0)
    assert (check.passed, check.observed, check.reason) == (
        False, None, "not measured: no intervals were recorded")


def test_nan_intervals_never_pass():
    exp = parse_expectation("read.iops", "!= 5 in all")
    assert not evaluate_window(exp, [1.0, math.nan], None).passed


def test_evaluate_window_needs_a_window():
    with pytest.raises(ValueError, match="has no window"):
        evaluate_window(parse_expectation("read.iops", ">= 1"), [1.0], None)
