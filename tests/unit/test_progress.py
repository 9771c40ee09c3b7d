"""The live progress line: the suite's position and planned time, a rate over a window of the
current run only, the unit the workload is judged in, and a frame that fits the terminal.

Snapshots carry their own clock (the engine's counted time): nothing here sleeps or times.
"""

from __future__ import annotations

import io

import pytest

from iogate.metrics import Kind
from iogate.plan import plan
from iogate.progress import (
    BANDWIDTH,
    BOTH,
    IOPS,
    Frame,
    ProgressLine,
    RateWindow,
    Span,
    eta_text,
    rate_unit,
    remaining,
    render,
    schedule,
)
from iogate.results import Progress
from iogate.spec import load_suite_text

S = 10**9


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def snap(**kw) -> Progress:
    base = dict(state="running", elapsed_ns=0, counted_ns=0, expected_ns=0, ios=(0, 0),
                bytes=(0, 0), errors=0, jobs_done=0, jobs=1)
    base.update(kw)
    return Progress(**base)


def suite(body: str):
    text = "suite: p\nworkloads:\n" + body
    return load_suite_text(text, "p.suite.yaml", {}).cases


def workload(name: str, extra: str = "", rw: str = "read") -> str:
    return (f"  - name: {name}\n    ioengine: null\n    rw: {rw}\n    size: 1MiB\n"
            + "".join(f"    {line}\n" for line in extra.split(";") if line))


TIMED = "runtime: 10s;time_based: true"


# -- the plan -----------------------------------------------------------------------------

def test_positions_count_cases_and_a_group_shows_its_range() -> None:
    cases = suite(workload("a", TIMED) + workload("b", TIMED + ";group: g")
                  + workload("c", TIMED + ";group: g") + workload("d", TIMED))
    planned = schedule(plan(cases))
    assert planned.cases == 4
    assert [planned.position(i) for i in range(3)] == ["1/4", "2-3/4", "4/4"]
    assert planned.position(1, 1) == "3/4"  # the second case of the group


def test_planned_time_sums_delay_ramp_runtime_repeats_and_later_units() -> None:
    cases = suite(workload("a", TIMED + ";ramp_time: 2s;startdelay: 1s;repeat: 3")
                  + workload("b", "runtime: 5s;time_based: true")
                  + workload("c", "runtime: 7s;time_based: true"))
    planned = schedule(plan(cases))
    assert planned.units[0].span == Span(3 * 13 * S, 3 * 13 * S)
    assert planned.after(0) == Span(12 * S, 12 * S)  # b and c
    assert planned.after(1) == Span(7 * S, 7 * S)
    assert planned.after(2) == Span(0, 0)


def test_a_group_lasts_as_long_as_its_longest_job() -> None:
    cases = suite(workload("a", "runtime: 3s;time_based: true;group: g")
                  + workload("b", "runtime: 8s;time_based: true;group: g"))
    assert schedule(plan(cases)).units[0].span == Span(8 * S, 8 * S)


def test_a_run_ending_by_size_has_no_known_end_and_a_runtime_caps_it() -> None:
    cases = suite(workload("sized") + workload("capped", "runtime: 4s")
                  + workload("timed", TIMED))
    planned = schedule(plan(cases))
    assert planned.units[0].span == Span(0, None)
    assert planned.units[1].span == Span(0, 4 * S)
    assert planned.after(0) == Span(10 * S, 14 * S)


def test_precondition_passes_are_planned_runs() -> None:
    cases = suite(workload("a", TIMED + ";precondition: [{rw: write, runtime: 2s, "
                               "time_based: true, loops: 3}]"))
    unit = schedule(plan(cases)).units[0]
    assert [r.span for r in unit.runs] == [Span(2 * S, 2 * S)] * 3 + [Span(10 * S, 10 * S)]
    assert unit.span == Span(16 * S, 16 * S)


def test_steady_state_rounds_between_the_fewest_that_can_settle_and_the_most() -> None:
    cases = suite(workload("a", "steady_state: {metric: read.iops, round: 2s, window: 3, "
                               "ramp: 3s, max_rounds: 10}"))
    unit = schedule(plan(cases)).units[0]
    assert len(unit.runs) == 10
    # two rounds start within the ramp, then a window of three: at least 5 rounds of 2 s
    assert unit.span == Span(5 * 2 * S, 10 * 2 * S)


# -- the unit -----------------------------------------------------------------------------

@pytest.mark.parametrize(("rw", "bs", "unit"), [
    ("randread", "4k", IOPS),
    ("randrw", "16k", IOPS),
    ("randread", "128k", BANDWIDTH),  # large blocks
    ("read", "4k", BANDWIDTH),  # sequential
    ("write", "1MiB", BANDWIDTH),
])
def test_unit_without_expectations_by_pattern_and_block_size(rw: str, bs: str,
                                                             unit: str) -> None:
    (case,) = suite(workload("a", f"bs: {bs}", rw=rw))
    assert rate_unit(case.workload) == unit


def test_unit_follows_what_is_judged() -> None:
    (case,) = suite(workload("a", "bs: 1MiB", rw="read"))
    assert rate_unit(case.workload, [Kind.IOPS, Kind.DURATION]) == IOPS
    (case,) = suite(workload("a", "bs: 4k", rw="randread"))
    assert rate_unit(case.workload, [Kind.BANDWIDTH]) == BANDWIDTH
    assert rate_unit(case.workload, [Kind.BANDWIDTH, Kind.IOPS]) == BOTH


def test_the_line_shows_the_unit_of_the_case_and_of_each_precondition() -> None:
    cases = suite(workload("a", TIMED + ";bs: 4k;precondition: [{rw: write, bs: 1MiB}]",
                           rw="randread")
                  + "    expect:\n      read.iops: '>= 1'\n")
    line = ProgressLine("a", stream=Terminal(), schedule=schedule(plan(cases)))
    line.set_phase("precondition 1/1")
    assert line.frame(snap()).unit == BANDWIDTH
    line.set_phase("")
    assert line.frame(snap()).unit == IOPS


# -- the rate -----------------------------------------------------------------------------

def test_no_rate_until_the_window_spans_a_second() -> None:
    w = RateWindow()
    w.add(snap(counted_ns=S // 5, ios=(200, 0), bytes=(200 * 4096, 0)))
    assert w.rate() is None
    w.add(snap(counted_ns=S, ios=(1000, 0), bytes=(1000 * 4096, 0)))
    assert w.rate() is None  # 0.8 s between the snapshots
    w.add(snap(counted_ns=S + S // 5, ios=(1200, 0), bytes=(1200 * 4096, 0)))
    iops, bw = w.rate() or (0, 0)
    assert iops == pytest.approx(1000.0)
    assert bw == pytest.approx(1000.0 * 4096)


def test_rate_is_over_the_last_two_seconds_only() -> None:
    w = RateWindow()
    ios = 0
    for tenth in range(1, 61):  # 1k IOPS for 4 s, then 5k IOPS for 2 s
        ios += 100 if tenth <= 40 else 500
        w.add(snap(counted_ns=tenth * S // 10, ios=(ios, 0)))
    iops, _ = w.rate() or (0, 0)
    assert iops == pytest.approx(5000.0)


def test_rate_restarts_when_the_run_is_not_counting_or_counts_go_back() -> None:
    w = RateWindow()
    for t in range(0, 4):
        w.add(snap(counted_ns=t * S, ios=(t * 1000, 0)))
    assert w.rate() is not None
    w.add(snap(state="ramp"))
    assert w.rate() is None
    for t in range(0, 4):
        w.add(snap(counted_ns=t * S, ios=(t * 1000, 0)))
    w.add(snap(counted_ns=5 * S, ios=(10, 0)))  # another run's counts
    assert w.rate() is None


def test_a_backend_that_does_not_count_live_has_no_rate() -> None:
    w = RateWindow()
    for t in range(0, 4):
        w.add(snap(counted_ns=t * S, counts=False))
    assert w.rate() is None


def test_a_new_repeat_never_shows_the_last_ones_rate() -> None:
    out = Terminal()
    line = ProgressLine("case", stream=out)
    line.set_phase("repeat 1/2")
    for t in range(0, 4):
        frame = line.frame(snap(counted_ns=t * S, ios=(t * 50_000, 0)))
    assert frame.rate is not None
    assert frame.rate[0] == pytest.approx(50_000)
    line.set_phase("repeat 2/2")
    frame = line.frame(snap(state="ramp", elapsed_ns=S // 5))
    assert frame.rate is None
    assert frame.phase == "repeat 2/2"
    assert "– IOPS" in render(frame)
    # counting again: one snapshot is no window, though the last run's was
    frame = line.frame(snap(counted_ns=3 * S, ios=(10, 0)))
    assert frame.rate is None


# -- the time left ------------------------------------------------------------------------

def test_eta_is_the_runs_end_then_the_units_runs_then_later_units() -> None:
    cases = suite(workload("a", TIMED + ";repeat: 3") + workload("b", "runtime: 5s;"
                                                                 "time_based: true"))
    planned = schedule(plan(cases))
    line = ProgressLine("a", stream=Terminal(), schedule=planned, unit=0)
    line.set_phase("repeat 1/3")
    line.set_phase("repeat 2/3")
    frame = line.frame(snap(elapsed_ns=4 * S, counted_ns=4 * S, expected_ns=10 * S))
    assert frame.position == "1/2"
    assert frame.eta == Span((6 + 10 + 5) * S, (6 + 10 + 5) * S)
    last = ProgressLine("b", stream=Terminal(), schedule=planned, unit=1)
    last.set_phase("")
    frame = last.frame(snap(elapsed_ns=S, counted_ns=S, expected_ns=5 * S))
    assert frame.position == "2/2"
    assert frame.eta == Span(4 * S, 4 * S)


def test_eta_is_a_lower_bound_while_laying_out_and_after_a_sized_run() -> None:
    cases = suite(workload("a", TIMED) + workload("b"))
    planned = schedule(plan(cases))
    line = ProgressLine("a", stream=Terminal(), schedule=planned, unit=0)
    line.set_phase("")
    frame = line.frame(snap(state="layout", layout_bytes=1, layout_total=4))
    assert frame.eta == Span(10 * S, None)
    assert eta_text(frame.eta) == "ETA ≥ 10s"


def test_a_sized_run_goes_at_the_pace_of_its_bytes() -> None:
    # half the bytes in 2 s of counted time: 2 s to go, at least (its end is not planned)
    left = remaining(snap(bytes=(300, 200), counted_ns=2 * S, elapsed_ns=2 * S), 1000,
                     Span(0, None))
    assert left == Span(2 * S, None)
    capped = remaining(snap(bytes=(300, 200), counted_ns=2 * S, elapsed_ns=2 * S,
                            expected_ns=10 * S), 1000, Span(0, 10 * S))
    assert capped == Span(2 * S, 8 * S)


@pytest.mark.parametrize(("span", "text"), [
    (Span(65 * S, 65 * S), "ETA 1m05s"),
    (Span(3 * 3600 * S + 61 * S, 3 * 3600 * S + 61 * S), "ETA 3h01m"),
    (Span(S // 2, S // 2), "ETA 1s"),
    (Span(20 * S, None), "ETA ≥ 20s"),
    (Span(0, None), "ETA unknown"),
    (Span(0, 40 * S), "ETA ≤ 40s"),
    (Span(10 * S, 40 * S), "ETA 10s–40s"),
])
def test_eta_text(span: Span, text: str) -> None:
    assert eta_text(span) == text


# -- the frame ----------------------------------------------------------------------------

FRAME = Frame(label="long-suite-name.suite.yaml::uring-4k-randread-qd16", state="running",
              elapsed_ns=3 * S, phase="repeat 2/3", position="3/40", fraction=0.5,
              rate=(52_100.0, 52_100.0 * 4096), unit=IOPS, eta=Span(125 * S, 125 * S))


def test_a_wide_frame_shows_everything() -> None:
    text = render(FRAME, 200, bar=10)
    assert text.startswith("[3/40] long-suite-name.suite.yaml::uring-4k-randread-qd16 ")
    assert "[#####.....]" in text
    assert "repeat 2/3: running" in text
    assert "52.1k IOPS" in text
    assert text.endswith("ETA 2m05s")


def test_a_narrow_terminal_shortens_the_label_not_the_figures() -> None:
    wide = render(FRAME, 200, bar=10)
    text = render(FRAME, len(wide) - 5, bar=10)
    assert len(text) == len(wide) - 6  # the last column is left free
    assert "…" in text
    assert "[#####.....]" in text
    text = render(FRAME, 70, bar=10)
    assert len(text) <= 69
    assert "[#####" not in text  # the bar went first
    for figure in ("[3/40]", "repeat 2/3: running", "52.1k IOPS", "ETA 2m05s"):
        assert figure in text


def test_units_and_ascii() -> None:
    both = Frame(label="a", state="running", elapsed_ns=0, unit=BOTH,
                 rate=(1000.0, 400 * 2.0**20), eta=Span(0, None))
    assert "1k IOPS 400MiB/s" in render(both)
    none = Frame(label="a", state="ramp", elapsed_ns=0, unit=BANDWIDTH, eta=Span(S, None))
    assert "– MiB/s" in render(none)
    assert "- MiB/s" in render(none, ascii=True)
    assert "ETA >= 1s" in render(none, ascii=True)


# -- the terminal -------------------------------------------------------------------------

def test_silent_when_not_a_terminal() -> None:
    out = io.StringIO()
    line = ProgressLine("case", stream=out)
    line(snap(elapsed_ns=S, expected_ns=2 * S))
    line.close()
    assert out.getvalue() == ""


def test_writes_a_frame_and_close_clears_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    out = Terminal()
    line = ProgressLine("case", stream=out, width=10)
    line(snap(elapsed_ns=3 * S, counted_ns=3 * S, expected_ns=4 * S))
    frame = out.getvalue().split("\r")[-1]
    assert "[########..]" in frame
    assert "ETA 1s" in frame
    assert frame.endswith("\x1b[K")
    line.close()
    assert out.getvalue().endswith("\r\x1b[K")


def test_a_stream_that_cannot_write_the_symbols_gets_ascii() -> None:
    class Ascii(Terminal):
        encoding = "ascii"

    line = ProgressLine("case", stream=Ascii())
    line(snap(state="ramp"))
    assert "- IOPS" in line.stream.getvalue()  # type: ignore[attr-defined]


def test_a_plan_of_one_unit_shows_no_position_but_its_unit_and_time() -> None:
    cases = suite(workload("a", TIMED + ";bs: 1MiB"))
    line = ProgressLine("a", stream=Terminal(), schedule=schedule([cases]))
    line.set_phase("")
    frame = line.frame(snap(elapsed_ns=4 * S, counted_ns=4 * S, expected_ns=10 * S))
    assert frame.position == ""
    assert frame.unit == BANDWIDTH
    assert frame.eta == Span(6 * S, 6 * S)


def test_a_label_that_fits_once_the_bar_is_gone_is_not_shortened() -> None:
    frame = Frame(label="short", state="running", elapsed_ns=0, eta=Span(0, 0))
    whole = render(frame, 200, bar=30)
    text = render(frame, len(whole) - 10, bar=30)
    assert "[" not in text
    assert text.startswith("short running")
