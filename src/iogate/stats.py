"""Statistics for gating on noisy measurements, in pure Python.

Owns: the summary of repeated measurements (median and spread), the Mann-Whitney U
rank test, the regression verdict that
combines a significance test with a minimum effect size, and the SNIA PTS steady-state
rule over measurement rounds. Nothing here knows about metrics or files.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

# Up to this many samples per side without ties, the Mann-Whitney p-value is exact.
EXACT_LIMIT = 20


def median(values: Sequence[float]) -> float:
    """The middle value; the mean of the two middle values for an even count."""
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[mid])
    return (ordered[mid - 1] + ordered[mid]) / 2


@dataclass(frozen=True)
class Spread:
    """Centre and spread of repeated measurements of one metric."""

    median: float
    mean: float
    min: float
    max: float
    cv_pct: float  # sample standard deviation / |mean| * 100; 0 for a single sample
    n: int


def summary(samples: Sequence[float]) -> Spread:
    """Median, mean, extremes and coefficient of variation of ``samples``.

    The coefficient of variation uses the sample standard deviation (n - 1). With a mean of
    zero it is 0 when every sample is equal and infinite otherwise.
    """
    if not samples:
        raise ValueError("summary of no samples")
    mean = statistics.fmean(samples)
    sd = statistics.stdev(samples) if len(samples) > 1 else 0.0
    if sd == 0.0:
        cv = 0.0
    elif mean == 0.0:
        cv = math.inf
    else:
        cv = sd / abs(mean) * 100.0
    return Spread(median(samples), mean, float(min(samples)), float(max(samples)), cv,
                  len(samples))


# -- Mann-Whitney U -------------------------------------------------------------------------

def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties sharing the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        shared = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[order[k]] = shared
        i = j + 1
    return ranks


@cache
def _u_counts(n1: int, n2: int) -> tuple[int, ...]:
    """How many of the C(n1 + n2, n1) orderings give U = 0, 1, ..., n1 * n2.

    U counts the pairs where the first sample's value is the larger. The largest value of
    all is either from the first sample (beating all n2 others: U - n2 remains for the
    rest) or from the second (beating none): f(u; n1, n2) = f(u - n2; n1 - 1, n2) +
    f(u; n1, n2 - 1).
    """
    if n1 == 0 or n2 == 0:
        return (1,)
    first = _u_counts(n1 - 1, n2)
    second = _u_counts(n1, n2 - 1)
    out = [0] * (n1 * n2 + 1)
    for u, count in enumerate(first):
        out[u + n2] += count
    for u, count in enumerate(second):
        out[u] += count
    return tuple(out)


def exact_p_value(u: float, n1: int, n2: int) -> float:
    """Two-sided exact p-value of U (no ties): twice the smaller tail, at most 1."""
    counts = _u_counts(n1, n2)
    total = math.comb(n1 + n2, n1)
    k = int(round(u))
    low = sum(counts[: k + 1])
    high = sum(counts[k:])
    return min(1.0, 2 * min(low, high) / total)


def smallest_p_value(n1: int, n2: int) -> float:
    """The smallest two-sided exact p-value samples of these sizes can give:
    complete separation, 2 / C(n1 + n2, n1). 3 + 3 samples give 0.1, 4 + 4 give 0.029."""
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def samples_needed(alpha: float) -> int:
    """The smallest n such that n + n samples can reach a two-sided p <= ``alpha``."""
    n = 1
    while smallest_p_value(n, n) > alpha:
        n += 1
    return n


def mann_whitney_u(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Mann-Whitney U of ``a`` against ``b`` and the two-sided p-value.

    U is the number of pairs (x from a, y from b) with x > y, ties counting one half, so
    U(a, b) + U(b, a) = len(a) * len(b). The p-value is exact when there are no ties and
    both samples have at most ``EXACT_LIMIT`` values; otherwise it comes from the normal
    approximation with the tie correction of the variance and a continuity correction of
    one half.
    """
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        raise ValueError("Mann-Whitney U needs at least one value in each sample")
    ranks = _ranks([*a, *b])
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    tied = len(set(a) | set(b)) < n1 + n2
    if not tied and n1 <= EXACT_LIMIT and n2 <= EXACT_LIMIT:
        return u, exact_p_value(u, n1, n2)
    n = n1 + n2
    groups: dict[float, int] = {}
    for x in (*a, *b):
        groups[x] = groups.get(x, 0) + 1
    ties = sum(t**3 - t for t in groups.values())
    variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0:  # every value equal: no evidence of any difference
        return u, 1.0
    z = max(0.0, abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(variance)
    return u, min(1.0, math.erfc(z / math.sqrt(2)))


# -- regression verdict ---------------------------------------------------------------------

@dataclass(frozen=True)
class Regression:
    """Whether new samples are worse than old ones, and why."""

    p_value: float | None  # Mann-Whitney two-sided; None with fewer than 2 samples a side
    effect_pct: float  # (median(new) - median(old)) / |median(old)| * 100
    regressed: bool
    reason: str


def effect_pct(old_median: float, new_median: float) -> float:
    """Relative change of the median in percent; infinite when it leaves zero."""
    if old_median == 0:
        return 0.0 if new_median == 0 else math.copysign(math.inf, new_median)
    return (new_median - old_median) / abs(old_median) * 100.0


def regression(old_samples: Sequence[float], new_samples: Sequence[float], *,
               higher_is_better: bool | None, alpha: float = 0.05,
               min_effect_pct: float = 5.0) -> Regression:
    """Judge whether ``new_samples`` regressed against ``old_samples``.

    ``higher_is_better``: True for throughput, False for latency, None when neither
    direction is better (then a change either way counts). A regression needs all of:

    - the median moved in the bad direction;
    - by at least ``min_effect_pct`` percent of the old median;
    - a Mann-Whitney two-sided p-value <= ``alpha``, when the sample counts can reach it.

    The exact test cannot be significant with too few samples: its smallest p-value is
    2 / C(n1 + n2, n1), 0.1 for 3 + 3 samples, so alpha 0.05 needs at least 4 + 4 (and
    alpha 0.01 needs 5 + 5; 5 + 5 or more is advisable so one outlier does not decide).
    With fewer samples the verdict rests on the effect size alone and the reason says so.
    """
    if not old_samples or not new_samples:
        raise ValueError("a regression verdict needs samples on both sides")
    n1, n2 = len(old_samples), len(new_samples)
    effect = effect_pct(median(old_samples), median(new_samples))
    p = mann_whitney_u(old_samples, new_samples)[1] if n1 >= 2 and n2 >= 2 else None
    if higher_is_better is None:
        bad = effect != 0
    else:
        bad = effect < 0 if higher_is_better else effect > 0
    change = f"median {effect:+.1f}%"
    if not bad:
        return Regression(p, effect, False, f"{change}: not in the worse direction")
    if abs(effect) < min_effect_pct:
        return Regression(p, effect, False,
                          f"{change}: below the minimum effect of {min_effect_pct:g}%")
    if p is not None and smallest_p_value(n1, n2) <= alpha:
        if p <= alpha:
            return Regression(p, effect, True, f"{change}, p={p:.3g} <= {alpha:g}")
        return Regression(p, effect, False,
                          f"{change}, but p={p:.3g} > {alpha:g}: not significant")
    need = samples_needed(alpha)
    return Regression(p, effect, True,
                      f"{change}; {n1}+{n2} sample(s) cannot reach significance {alpha:g} "
                      f"(needs {need}+{need}): decided by the effect size alone")


# -- steady state ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SteadyVerdict:
    """The SNIA PTS steady-state test of one window of rounds.

    ``window_start`` is the index of the window's first round, None when there were fewer
    rounds than the window; the other figures are then None too.
    """

    steady: bool
    window_start: int | None
    mean: float | None
    range_pct: float | None  # (max - min) / |mean| * 100
    slope_pct_of_mean: float | None  # |slope| * (window - 1) / |mean| * 100
    deviation_pct: float | None = None  # max |y - mean| / |mean| * 100


def _pct_of(excursion: float, mean: float) -> float:
    if mean == 0:
        return 0.0 if excursion == 0 else math.inf
    return excursion / abs(mean) * 100.0


def steady_state(values: Sequence[float], *, window: int = 5, range_pct: float | None = 20.0,
                 slope_pct: float | None = 10.0,
                 deviation_pct: float | None = None) -> SteadyVerdict:
    """Apply the SNIA PTS steady-state rule to the last ``window`` rounds of ``values``.

    With y the tracked metric of each round in the window and x the round index (one per
    round), the window is steady when each limit given (not None) holds:

    - data excursion: max(y) - min(y) <= ``range_pct`` % of the window mean;
    - slope excursion: the least-squares line through (x, y) rises or falls by at most
      ``slope_pct`` % of the window mean from the first round of the window to its last,
      i.e. |slope| * (window - 1) <= ``slope_pct`` % of the mean. This is the difference
      between the fitted line's largest and smallest value over the window, which is how
      SNIA PTS defines the excursion of the best linear fit.
    - deviation: every y within ``deviation_pct`` % of the window mean (fio's steady state
      on iops or bw, where SNIA PTS's range is not asked).

    Both are relative to the mean's magnitude, so the verdict does not change when every
    value is multiplied by the same positive constant.
    """
    if window < 2:
        raise ValueError("a steady-state window needs at least 2 rounds")
    if len(values) < window:
        return SteadyVerdict(False, None, None, None, None)
    start = len(values) - window
    ys = [float(v) for v in values[start:]]
    mean = statistics.fmean(ys)
    x_mean = (window - 1) / 2
    sxx = sum((x - x_mean) ** 2 for x in range(window))
    slope = sum((x - x_mean) * (y - mean) for x, y in enumerate(ys)) / sxx
    data_excursion = max(ys) - min(ys)
    slope_excursion = abs(slope) * (window - 1)
    deviation = max(abs(y - mean) for y in ys)
    limit = abs(mean) / 100.0
    steady = all(pct is None or excursion <= pct * limit for excursion, pct in (
        (data_excursion, range_pct), (slope_excursion, slope_pct), (deviation, deviation_pct)))
    return SteadyVerdict(steady, start, mean, _pct_of(data_excursion, mean),
                         _pct_of(slope_excursion, mean), _pct_of(deviation, mean))
