"""Text laid out for a width (iogate.text): no line wider than asked where words allow, and
no word of any cell lost or split."""

from __future__ import annotations

import io
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iogate import text

WORD = st.text(alphabet="abcdefghij-/.:=", min_size=1, max_size=14)
PROSE = st.lists(WORD, max_size=40).map(" ".join)
SHORT = st.text(alphabet="abcdefghij", min_size=1, max_size=12)


def words(rendered: str) -> list[str]:
    return rendered.split()


@given(head=st.lists(SHORT, min_size=1, max_size=3),
       rows=st.lists(st.tuples(st.lists(SHORT, min_size=3, max_size=3), PROSE, PROSE),
                     max_size=6),
       columns=st.integers(min_value=text.MIN_WIDTH, max_value=160))
def test_a_table_fits_and_keeps_every_word(head: list[str], rows: list, columns: int) -> None:
    headers = ("case", "verdict", "time", "metrics", "why")
    body = [(*fixed, metrics, why) for fixed, metrics, why in rows]
    out = text.table(headers, body, columns=columns, free=(-2,), notes=True)
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= columns
    # every word of every cell is there, whole, in order within its row's lines
    rendered = words(out)
    for row in body:
        for cell in row:
            for word in cell.split():
                assert word in rendered
    assert len(lines) >= 2 + len(body)  # header, rule, at least one line a row


def test_a_long_note_goes_under_its_row_and_a_short_one_stays() -> None:
    why = "the device carries an ext4 signature; " * 6
    out = text.table(("case", "verdict", "why"),
                     [("a.suite.yaml::w", "ERROR", why.strip()),
                      ("a.suite.yaml::r", "passed", "no expectations")],
                     columns=80, notes=True)
    lines = out.splitlines()
    assert lines[0].split() == ["case", "verdict", "why"]
    assert lines[2].rstrip() == "a.suite.yaml::w  ERROR"
    assert lines[3].startswith("    why: the device carries")
    assert all(line.startswith("    ") for line in lines[3:-1])
    assert lines[-1] == "a.suite.yaml::r  passed   no expectations"
    assert max(len(line) for line in lines) <= 80


def test_a_free_column_wraps_within_itself() -> None:
    metrics = "read.iops=1.8M read.bw=6.9GiB/s read.clat.p99=56ns write.iops=1.7M"
    out = text.table(("case", "metrics"), [("x" * 40, metrics)], columns=text.MIN_WIDTH,
                     free=(1,))
    lines = out.splitlines()[2:]
    assert len(lines) > 1
    assert all(len(line) <= text.MIN_WIDTH for line in lines)
    start = 40 + len(text.GAP)
    assert all(line[:start].strip() in ("", "x" * 40) for line in lines)
    assert " ".join(line[start:].strip() for line in lines) == metrics


def test_numbers_align_on_the_right() -> None:
    out = text.table(("n", "v"), [("a", "1"), ("b", "100")], columns=80, right=(1,))
    assert out.splitlines()[2:] == ["a    1", "b  100"]


@given(line=PROSE, columns=st.integers(min_value=20, max_value=140),
       taken=st.integers(min_value=0, max_value=15), lead=st.integers(min_value=0, max_value=6))
def test_fit_wraps_a_long_line_keeping_its_words(line: str, columns: int, taken: int,
                                                  lead: int) -> None:
    source = " " * lead + line
    out = text.fit(source, columns, taken).splitlines()
    for n, got in enumerate(out):
        room = columns - (taken if n == 0 else 0)
        # only a word longer than the room is let past it, alone on its line
        assert len(got) <= room or len(got.split()) == 1
    assert " ".join(" ".join(out).split()) == " ".join(line.split())
    if len(out) > 1:
        assert all(got.startswith(" " * (lead + 2)) for got in out[1:])


def test_fit_leaves_short_lines_alone() -> None:
    source = "a\n  b c\n\nd"
    assert text.fit(source, 80) == source


def test_the_width_is_columns_then_the_terminal_then_a_log(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert text.width(io.StringIO()) == text.LOG_WIDTH  # a capture, a file: a log
    assert text.width(None) == text.LOG_WIDTH
    with open(os.devnull, "w") as null:  # a descriptor that is no terminal
        assert text.width(null) == text.LOG_WIDTH
    monkeypatch.setenv("COLUMNS", "200")
    assert text.width(io.StringIO()) == 200
    monkeypatch.setenv("COLUMNS", "20")
    assert text.width(None) == text.MIN_WIDTH
    master, slave = os.openpty()
    try:
        monkeypatch.delenv("COLUMNS")
        import fcntl
        import struct
        import termios

        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 97, 0, 0))
        with os.fdopen(os.dup(slave), "w") as tty:
            assert text.width(tty) == 97
    finally:
        os.close(master)
        os.close(slave)
