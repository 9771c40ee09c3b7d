"""The live progress line: silent off a terminal, truthful bar and ETA on one."""

from __future__ import annotations

import io

from iogate.report import ProgressLine
from iogate.results import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def progress(**kw) -> Progress:
    base = dict(state="running", elapsed_ns=0, counted_ns=0, expected_ns=0, ios=(0, 0),
                bytes=(0, 0), errors=0, jobs_done=0, jobs=1, layout_bytes=0, layout_total=0)
    base.update(kw)
    return Progress(**base)


def last_line(stream: io.StringIO) -> str:
    return stream.getvalue().split("\r")[-1]


def test_silent_when_not_a_terminal() -> None:
    out = io.StringIO()
    line = ProgressLine("case", stream=out)
    line(progress(elapsed_ns=10**9, expected_ns=2 * 10**9))
    line.close()
    assert out.getvalue() == ""


def test_time_based_bar_and_eta() -> None:
    out = Terminal()
    line = ProgressLine("case", stream=out, width=10)
    line(progress(elapsed_ns=3 * 10**9, counted_ns=3 * 10**9, expected_ns=4 * 10**9))
    text = last_line(out)
    assert "[########..]" in text  # 3/4 of 10 cells, rounded
    assert "ETA    1s" in text
    assert "running" in text


def test_layout_shows_layout_share_without_eta() -> None:
    out = Terminal()
    line = ProgressLine("case", stream=out, width=10)
    line(progress(state="layout", layout_bytes=3, layout_total=10, expected_ns=9 * 10**9))
    text = last_line(out)
    assert "[###.......]" in text and "laying out" in text and "ETA" not in text


def test_size_based_progress_and_eta() -> None:
    out = Terminal()
    line = ProgressLine("case", stream=out, width=10, total_bytes=1000)
    # half the bytes in 2 s of counted time: 2 s to go
    line(progress(bytes=(300, 200), counted_ns=2 * 10**9, elapsed_ns=2 * 10**9))
    text = last_line(out)
    assert "[#####.....]" in text and "ETA    2s" in text


def test_live_iops_from_successive_polls(monkeypatch) -> None:
    clock = iter([10.0, 12.0])
    monkeypatch.setattr("iogate.report.time.monotonic", lambda: next(clock))
    out = Terminal()
    line = ProgressLine("case", stream=out)
    line(progress(ios=(100, 0)))
    line(progress(ios=(100_100, 0)))  # 100k IOs in 2 s
    assert "50k IOPS" in last_line(out)


def test_close_clears_the_line() -> None:
    out = Terminal()
    line = ProgressLine("case", stream=out)
    line(progress())
    line.close()
    assert out.getvalue().endswith("\r\x1b[K")
