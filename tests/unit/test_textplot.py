"""The text latency histogram of failure reports: exact golden output and layout properties."""

from __future__ import annotations

import re
from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from iogate.histogram import Histogram, bucket_bounds, bucket_index
from iogate.textplot import latency_summary
from iogate.units import parse_duration

SAMPLES = [150_000] * 600 + [180_000] * 300 + [350_000] * 90 + [1_500_000] * 9 + [7_000_000]

GOLDEN = """\
150us-200us |████████████████████ 900   90.00%
200us-300us |                       0   90.00%
300us-500us |██                    90   99.00%
500us-700us |                       0   99.00%
  700us-1ms |                       0   99.00%
  1ms-1.5ms |                       0   99.00%  ◀ SLO 1.2ms
  1.5ms-2ms |▏                      9   99.90%
    2ms-3ms |                       0   99.90%
    3ms-5ms |                       0   99.90%
    5ms-7ms |▏                      1  100.00%
n=1000  p50 150us  p90 179.7us  p99 349.2us  p99.9 1.503ms  max 6.996ms
<= SLO 1.2ms: 99.00% of samples"""

GOLDEN_ASCII = """\
100us-1ms |#################### 990   99.00%
 1ms-10ms |.                     10  100.00%  <- SLO 1.2ms
n=1000  p50 150us  p90 179.7us  p99 349.2us  p99.9 1.503ms  max 7ms
<= SLO 1.2ms: 99.00% of samples"""


def test_golden() -> None:
    hist = Histogram.from_values(SAMPLES)
    assert latency_summary(hist, slo_ns=1_200_000, width=20) == GOLDEN


def test_golden_ascii_with_few_rows_and_the_exact_maximum() -> None:
    hist = Histogram.from_values(SAMPLES)
    text = latency_summary(hist, slo_ns=1_200_000, width=20, rows=4, ascii=True,
                           max_ns=7_000_000)
    assert text == GOLDEN_ASCII
    assert text.isascii()


def test_narrow_distributions_get_fine_rows() -> None:
    text = latency_summary(Histogram.from_values([100_000] * 6 + [103_000] * 3))
    assert text.splitlines()[:2] == [
        "100us-102us |██████████████████████████████████████████████████ 6   66.66%",
        "102us-104us |█████████████████████████                          3  100.00%",
    ]


def test_zero_latency_has_its_own_row() -> None:
    assert latency_summary(Histogram.from_values([0, 0, 1])).splitlines()[0].startswith(
        "  0-1ns |")


def test_an_slo_outside_the_rows_is_summarised_but_not_marked() -> None:
    text = latency_summary(Histogram.from_values([1000, 2000]), slo_ns=[10, 10**9])
    assert "SLO" not in "".join(line for line in text.splitlines() if "|" in line)
    assert "<= SLO 10ns: 0.00% of samples" in text
    assert "<= SLO 1s: 100.00% of samples" in text


def test_empty() -> None:
    assert latency_summary(Histogram()) == "no samples"


ROW = re.compile(r"^\s*(\S+)-(\S+) \|(\S*)\s+(\d+)\s+(\d+\.\d\d)%(?:\s+◀ SLO (.*))?$")

latencies = st.one_of(st.integers(0, 10**4), st.integers(0, 10**8), st.integers(0, 2**42))


@given(values=st.lists(latencies, min_size=1, max_size=200), rows=st.integers(1, 30),
       slo=st.integers(1, 10**9), width=st.integers(1, 60))
def test_layout_properties(values: list[int], rows: int, slo: int, width: int) -> None:
    hist = Histogram.from_values(values)
    lines = latency_summary(hist, slo_ns=slo, rows=rows, width=width).splitlines()
    table = [ROW.match(line) for line in lines if " |" in line]
    assert all(table), lines
    parsed = [m for m in table if m is not None]
    assert 1 <= len(parsed) <= max(3, rows)
    edges = [(parse_duration(m[1]), parse_duration(m[2])) for m in parsed]
    assert all(lo < hi for lo, hi in edges)
    assert all(a[1] == b[0] for a, b in pairwise(edges))  # contiguous
    counts = [int(m[4]) for m in parsed]
    assert sum(counts) == len(values)
    assert counts[0]
    assert counts[-1]  # no empty rows at either end
    assert parsed[-1][5] == "100.00"
    assert max(len(m[3]) for m in parsed) <= width
    for m, (lo, hi) in zip(parsed, edges, strict=True):
        if m[6] is not None:
            assert lo <= slo < hi
    # Every sample is counted in the row holding its bucket's middle.
    expected = [0] * len(edges)
    for v in values:
        b_lo, b_hi = bucket_bounds(bucket_index(v))
        mid = b_lo if b_hi - b_lo > 2**40 else b_lo + (b_hi - b_lo) // 2
        expected[next(i for i, (lo, hi) in enumerate(edges) if lo <= mid < hi)] += 1
    assert counts == expected
