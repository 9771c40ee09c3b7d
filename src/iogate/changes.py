"""Change points in a history: where a series of runs (one value per run, oldest first)
moves to another level, by how much and how significantly; and the level of its last stable
segment, with the noise it showed, that a new run is judged against.

The method is the one performance-history tools settled on (E-divisive means as Apache
Otava and MongoDB use it), built on ``ruptures``: the best single split of a segment, by
least squares (binary segmentation, at least ``min_runs`` runs a side), is a change point
when Student's t-test between its two sides (pooled variance: the series' own noise; on
the logarithms of the values when all are positive, as performance noise is
multiplicative) gives a p-value at most ``alpha``, the level moved by at least
``min_change_pct``, and the two sides also differ in rank order (Mann-Whitney U, p at most
:data:`RANK_ALPHA`: one slow outlier beside a normal run is no step, however slow); both
sides are then split the same way. Once no segment splits, each change point is tested
again between its neighbours and the weakest one that no longer holds is dropped, until
all hold.

``ruptures`` and ``scipy`` are the ``history`` extra: imported when a series is segmented.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iogate import stats as _stats
from iogate.errors import IogateError

ALPHA = 0.001  # default significance of a change point
MIN_CHANGE_PCT = 2.0  # default smallest move of the level that is a change
MIN_RUNS = 2  # default fewest runs on each side of a change point
RANK_ALPHA = 0.05  # the rank order of the two sides must differ at least this significantly
RECENT = 5  # default: a regression is new when it starts among a series' newest RECENT runs


class ChangesError(IogateError):
    """Change detection cannot run: the libraries it needs are missing."""


def require() -> None:
    """Raise ChangesError now if change detection's libraries are missing."""
    _libraries()


def _libraries() -> tuple[Any, Any, Any]:
    try:
        import numpy
        import ruptures
        from scipy import stats
    except ImportError as exc:
        why = f"{exc.name} is missing" if exc.name else str(exc)
        raise ChangesError(f"change detection needs ruptures and scipy ({why}): pip install "
                           "'iogate[history]'") from None
    return ruptures, stats, numpy


@dataclass(frozen=True)
class ChangePoint:
    """The level moved at run ``index`` (the first run of the new level)."""

    index: int
    before: float  # mean of the segment before
    after: float  # mean of the segment from ``index``
    p_value: float
    runs_before: int
    runs_after: int

    @property
    def change_pct(self) -> float:
        if self.before == 0:
            return math.inf if self.after else 0.0
        return (self.after - self.before) / abs(self.before) * 100.0


@dataclass(frozen=True)
class Level:
    """The last stable segment of a series: its runs' values from ``start`` on. Its level
    is their median and its noise their median absolute deviation (scaled to a standard
    deviation), so that a slow run inside it moves neither much."""

    start: int
    values: tuple[float, ...]

    @property
    def center(self) -> float:
        return _stats.median(self.values)

    @property
    def scale(self) -> float:
        """The noise of the runs: 1.4826 times their median absolute deviation."""
        center = self.center
        return 1.4826 * _stats.median([abs(v - center) for v in self.values])

    def p_value(self, value: float) -> float | None:
        """How likely a new run of this level lies as far from it as ``value`` (two sided,
        Student's t with the segment's own noise, as a prediction for one more run); None
        with fewer than 2 runs, where there is no noise to judge with."""
        n = len(self.values)
        if n < 2:
            return None
        _, tdist, _ = _libraries()
        scale = self.scale
        if scale == 0:
            return 1.0 if value == self.center else 0.0
        t = (value - self.center) / (scale * math.sqrt(1 + 1 / n))
        return float(2 * tdist.t.sf(abs(t), n - 1))


def _t_test(left: Sequence[float], right: Sequence[float]) -> float:
    """Two-sided p-value of Student's t-test with pooled variance; a side of one run uses
    the other side's noise alone."""
    _, tdist, _ = _libraries()
    n1, n2 = len(left), len(right)
    m1, m2 = sum(left) / n1, sum(right) / n2
    ss = sum((v - m1) ** 2 for v in left) + sum((v - m2) ** 2 for v in right)
    df = n1 + n2 - 2
    if df <= 0:
        return 1.0
    sd = math.sqrt(ss / df)
    if sd == 0:
        return 1.0 if m1 == m2 else 0.0
    t = (m2 - m1) / (sd * math.sqrt(1 / n1 + 1 / n2))
    return float(2 * tdist.t.sf(abs(t), df))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _moved_enough(left: Sequence[float], right: Sequence[float], min_change_pct: float) -> bool:
    before, after = _mean(left), _mean(right)
    if before == 0:
        return after != 0
    return abs(after - before) / abs(before) * 100.0 >= min_change_pct


def change_points(values: Sequence[float], *, alpha: float = ALPHA,
                  min_change_pct: float = MIN_CHANGE_PCT,
                  min_runs: int = MIN_RUNS) -> list[ChangePoint]:
    """The change points of a series, in order (see the module's method)."""
    if not 0 < alpha < 1:
        raise ValueError(f"the significance {alpha:g} is not strictly between 0 and 1")
    if min_runs < 1:
        raise ValueError(f"the fewest runs a side, {min_runs}, is not at least 1")
    if not 0 <= min_change_pct < math.inf:
        raise ValueError(f"the smallest change {min_change_pct:g}% is not a percentage >= 0")
    ruptures, _, numpy = _libraries()
    data = [float(v) for v in values]
    if any(not math.isfinite(v) for v in data):
        raise ValueError("a series to segment holds a value that is not a finite number")

    # Performance figures are positive and their noise multiplicative (a tail latency
    # spikes up by a factor, never down by as much): splits and t-tests are made on their
    # logarithms when every value is positive, the sizes on the values themselves.
    scaled = [math.log(v) for v in data] if data and min(data) > 0 else data

    def significance(lo: int, split: int, hi: int) -> float:
        return _t_test(scaled[lo:split], scaled[split:hi])

    def holds(lo: int, split: int, hi: int) -> bool:
        left, right = data[lo:split], data[split:hi]
        return (_moved_enough(left, right, min_change_pct)
                and significance(lo, split, hi) <= alpha
                and _stats.mann_whitney_u(left, right)[1] <= RANK_ALPHA)

    found: set[int] = set()
    pending = [(0, len(data))]
    while pending:
        lo, hi = pending.pop()
        if hi - lo < 2 * min_runs:
            continue
        segment = scaled[lo:hi]
        if max(segment) == min(segment):
            continue
        algo = ruptures.Binseg(model="l2", min_size=min_runs, jump=1).fit(
            numpy.asarray(segment))
        split = lo + algo.predict(n_bkps=1)[0]
        if lo < split < hi and holds(lo, split, hi):
            found.add(split)
            pending += [(lo, split), (split, hi)]
    points = sorted(found)
    # Re-test each against its neighbours now that all are known; drop the weakest that
    # fails, one at a time, until every one holds.
    while points:
        bounds = [0, *points, len(data)]
        failing = [(significance(bounds[i - 1], bounds[i], bounds[i + 1]), bounds[i])
                   for i in range(1, len(bounds) - 1)
                   if not holds(bounds[i - 1], bounds[i], bounds[i + 1])]
        if not failing:
            break
        points.remove(max(failing)[1])
    bounds = [0, *points, len(data)]
    return [ChangePoint(bounds[i], _mean(data[bounds[i - 1]:bounds[i]]),
                        _mean(data[bounds[i]:bounds[i + 1]]),
                        significance(bounds[i - 1], bounds[i], bounds[i + 1]),
                        bounds[i] - bounds[i - 1], bounds[i + 1] - bounds[i])
            for i in range(1, len(bounds) - 1)]


def last_level(values: Sequence[float], **options: Any) -> Level | None:
    """The level a new run is judged against: the last segment between change points that
    has lasted :data:`RECENT` runs (a newer one is a change still under watch, not yet the
    norm; a regression becomes the norm once it has lasted that long), else the first; None
    for an empty series."""
    if not values:
        return None
    bounds = [0, *(cp.index for cp in change_points(values, **options)), len(values)]
    lo, hi = next((lo, hi) for lo, hi in reversed(list(itertools.pairwise(bounds)))
                  if hi - lo >= RECENT or lo == 0)
    return Level(lo, tuple(float(v) for v in values[lo:hi]))
