"""Statistics for gating on noisy measurements, in pure Python.

Owns: the summary of repeated measurements (median and spread), Student's t distribution,
the test of new measurements against a reference's own noise (:func:`worse_p`), the
Mann-Whitney U rank test (change detection's check that two stretches differ in rank
order), the regression verdict that combines a significance test with a
minimum effect size, and the SNIA PTS steady-state rule over measurement rounds. Nothing
here knows about metrics or files.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
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


# -- Student's t ----------------------------------------------------------------------------

def _incomplete_beta(x: float, y: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b), with ``y`` = 1 - x given as
    exactly as the caller knows it, by its continued fraction (evaluated with the modified
    Lentz method; the symmetry I_x(a, b) = 1 - I_y(b, a) keeps x where the fraction
    converges fast)."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _incomplete_beta(y, x, b, a)
    front = math.exp(a * math.log(x) + b * math.log(y)
                     + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)) / a
    tiny = 1e-300
    f, c, d = tiny, tiny, 0.0
    for i in range(0, 400):
        m = i // 2
        if i == 0:
            term = 1.0
        elif i % 2:
            term = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))
        else:
            term = (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 + term * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + term / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        f *= c * d
        if abs(1.0 - c * d) < 1e-15:
            break
    return front * f


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t distribution with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"Student's t needs degrees of freedom > 0, not {df:g}")
    if math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * _incomplete_beta(df / (df + t * t), t * t / (df + t * t), df / 2, 0.5)
    return tail if t >= 0 else 1.0 - tail


def t_isf(p: float, df: float) -> float:
    """The t such that P(T > t) = ``p`` (0 < p < 1), by bisection on :func:`t_sf`."""
    if not 0 < p < 1:
        raise ValueError(f"a tail probability strictly between 0 and 1, not {p:g}")
    low, high = -1.0, 1.0
    while t_sf(low, df) < p:
        low *= 2
    while t_sf(high, df) > p:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        if t_sf(mid, df) > p:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * max(1.0, abs(mid)):
            break
    return (low + high) / 2


# -- new measurements against a reference's noise ------------------------------------------

def _on_logs(reference: Sequence[float]) -> bool:
    """Whether values are compared by their logarithms: when every reference value is
    positive (performance noise is multiplicative)."""
    return bool(reference) and min(reference) > 0


def _scale(reference: Sequence[float]) -> Callable[[float], float]:
    """How values are compared (:func:`_on_logs`); on logarithms a non-positive new value
    is infinitely low."""
    if _on_logs(reference):
        return lambda v: math.log(v) if v > 0 else -math.inf
    return float


def _mean(values: Sequence[float]) -> float:
    if any(math.isinf(v) for v in values):
        return math.fsum(v for v in values if math.isinf(v))  # nan if both infinities
    return math.fsum(values) / len(values)


def typical(reference: Sequence[float], observed: Sequence[float]) -> float:
    """The observed runs' mean on the scale :func:`worse_p` compares on (the geometric mean
    when it compares logarithms), as a value."""
    if _on_logs(reference):
        return math.exp(_mean([_scale(reference)(v) for v in observed])) \
            if min(observed) > 0 else 0.0
    return _mean(list(observed))


def reference_noise(reference: Sequence[float]) -> float | None:
    """The reference's run-to-run noise on the scale :func:`worse_p` compares on (the
    standard deviation of the logarithms: about the coefficient of variation); None with
    fewer than 2 values."""
    if len(reference) < 2:
        return None
    scaled = [_scale(reference)(v) for v in reference]
    return statistics.stdev(scaled)


def worse_p(reference: Sequence[float], observed: Sequence[float], *,
            lower_is_worse: bool) -> float | None:
    """One-sided p-value that ``observed`` (one or more runs) is worse than ``reference``
    (the runs of a baseline, or of a history's level), judged with the reference's own
    noise: Student's t with n - 1 degrees of freedom for the difference of the means
    (on the logarithms when every reference value is positive), the reference's standard
    deviation scaled for both sample sizes. Under an unchanged build the mean of the new
    runs differs from the reference's by a normal variable independent of the reference's
    deviation, so P(p <= alpha) = alpha. Using the reference's noise alone keeps the test
    monotone: making any observed value worse never raises p.

    None with fewer than 2 reference values (no noise to judge with) or no observation.
    A reference without noise gives 0 for any worse mean, 1 otherwise."""
    n, k = len(reference), len(observed)
    if n < 2 or k < 1:
        return None
    scale = _scale(reference)
    ref = [scale(v) for v in reference]
    obs = [scale(v) for v in observed]
    diff = _mean(obs) - _mean(ref)
    if math.isnan(diff):
        return 1.0
    if not lower_is_worse:
        diff = -diff
    sd = statistics.stdev(ref)
    if sd == 0 or math.isinf(diff):
        return 0.0 if diff < 0 else 1.0
    t = diff / (sd * math.sqrt(1 / n + 1 / k))
    return 1.0 - t_sf(t, n - 1)


def runs_needed(reference: Sequence[float], change_pct: float, alpha: float, *,
                lower_is_worse: bool, limit: int = 1000) -> int | None:
    """The fewest new runs whose values, ``change_pct`` percent worse than the reference's
    median, :func:`worse_p` finds significant at ``alpha``; 1 for a reference without
    noise; None when no number of runs up to ``limit`` can (the reference holds fewer than 2
    runs, or too much noise for its size: it needs more runs itself)."""
    noise = reference_noise(reference)
    if noise is None:
        return None
    if noise == 0:
        return 1
    change = abs(change_pct) / 100
    if _on_logs(reference):
        if lower_is_worse and change >= 1:
            return 1
        step = abs(math.log1p(-change if lower_is_worse else change))
    else:
        step = change * abs(median(reference))
    if not step:
        return None
    n = len(reference)
    critical = t_isf(alpha, n - 1) * noise
    for k in range(1, limit + 1):
        if critical * math.sqrt(1 / n + 1 / k) <= step:
            return k
    return None


RANK_ALPHA = 0.05  # the rank order a regression must also show (one slow run is none)


def rank_worse_p(reference: Sequence[float], observed: Sequence[float], *,
                 lower_is_worse: bool) -> float:
    """One-sided p-value that ``observed`` ranks below ``reference`` (worse), by the
    Mann-Whitney U statistic: the pairs in which the observed run is the better, ties
    counting one half, against U's distribution without ties (exact up to
    :data:`EXACT_LIMIT` runs a side, else normal). Ties are thereby never counted against
    a build, and the p-value never falls when an observed value gets better: it is
    monotone like :func:`worse_p`."""
    n, k = len(reference), len(observed)
    if n == 0 or k == 0:
        raise ValueError("a rank test needs runs on both sides")
    better = 0.0
    for o in observed:
        for r in reference:
            if o == r:
                better += 0.5
            elif (o > r) == lower_is_worse:
                better += 1
    if n * k <= EXACT_LIMIT * EXACT_LIMIT:
        counts = _u_counts(k, n)
        return sum(counts[:math.floor(better) + 1]) / math.comb(n + k, k)
    mean = n * k / 2
    sd = math.sqrt(n * k * (n + k + 1) / 12)
    return 0.5 * math.erfc((mean - better - 0.5) / sd / math.sqrt(2))


def worse(reference: Sequence[float], observed: Sequence[float], *, lower_is_worse: bool
          ) -> tuple[float | None, float | None]:
    """How much worse ``observed`` is than ``reference``: the p-value of :func:`worse_p`
    (None without a test: a reference of one run), and that of the rank order,
    :func:`rank_worse_p` (None where the runs cannot show one, :func:`rank_reachable`). A
    regression needs both: significance, and runs that rank below the reference's (one slow
    run beside normal ones is an outlier, not a level)."""
    p = worse_p(reference, observed, lower_is_worse=lower_is_worse)
    if p is None or not rank_reachable(len(reference), len(observed)):
        return p, None
    return p, rank_worse_p(reference, observed, lower_is_worse=lower_is_worse)


def significant(p: float | None, rank_p: float | None, alpha: float) -> bool:
    """Whether :func:`worse`'s p-values make a regression at ``alpha``."""
    return p is not None and p <= alpha and (rank_p is None or rank_p <= RANK_ALPHA)


def rank_reachable(n: int, k: int, alpha: float = RANK_ALPHA) -> bool:
    """Whether n reference runs and k observed ones, at least 2 (a single run is its build's
    only one: no outlier beside others), can show a rank order at ``alpha``: complete
    separation, 1 / C(n + k, k), is at most alpha."""
    return n > 0 and k > 1 and 1 / math.comb(n + k, k) <= alpha


@dataclass(frozen=True)
class Evidence:
    """How a check against a reference (a baseline's runs, or the history's level) was
    decided, in numbers a person can check: the reference (its median and noise, how many
    runs form it and which), the runs observed, the effect, the one-sided p-value of
    :func:`worse_p` and the significance it was held to once adjusted for the run's other
    statistical checks (``family``) and for looking after each adaptive repeat (``looks``).

    ``decision`` is one of: ``met`` (the threshold is met), ``regression`` (significant:
    fails), ``too few runs`` (no test possible: the effect size decides, fails),
    ``within noise`` (not significant: passes), ``one slow run`` (significant, but the runs
    do not rank below the reference's: an outlier, not a level; passes),
    ``within min effect`` (passes),
    ``improvement`` (the reference itself does not meet the expectation, which asks for an
    improvement: the threshold decides, fails), ``no test`` (a statistic such as @max that
    no test covers: the threshold decides, fails). ``decided``: whether more runs could not
    change it (adaptive repeats stop when every check is)."""

    reference: str  # "baseline" or "history"
    center: float  # the reference's median (of the statistic judged)
    spread: float | None  # the reference's standard deviation; None with a single run
    reference_runs: int
    runs: str  # which runs form the reference, in words
    observed_runs: int
    effect_pct: float  # the observation against the reference's median, signed
    p: float | None
    alpha: float  # the significance after the adjustments
    family: int  # statistical checks in the run (Bonferroni)
    looks: int  # times the check is looked at (adaptive repeats)
    decision: str
    decided: bool = True
    min_effect_pct: float = 0.0
    rank_p: float | None = None  # the rank order's one-sided p; None where it cannot show
    final: bool = True  # judged at the last look (the most runs), not an interim one

    def to_json(self) -> dict[str, object]:
        return {"reference": self.reference, "center": self.center, "spread": self.spread,
                "reference_runs": self.reference_runs, "runs": self.runs,
                "observed_runs": self.observed_runs, "effect_pct": self.effect_pct,
                "p": self.p, "alpha": self.alpha, "family": self.family, "looks": self.looks,
                "decision": self.decision, "decided": self.decided,
                "min_effect_pct": self.min_effect_pct, "rank_p": self.rank_p,
                "final": self.final}


INTERIM_SHARE = 0.1  # of a check's alpha, spent over the looks before the last


def adjusted_alpha(alpha: float, family: int, looks: int = 1, final: bool = True) -> float:
    """The significance each test is held to so that the chance of any false alarm in a
    run stays at most ``alpha``: Bonferroni over the ``family`` of the run's statistical
    checks; and with several ``looks`` (adaptive repeats), Haybittle and Peto's design:
    a small share (:data:`INTERIM_SHARE`) spent evenly over the interim looks, so that only
    a clear regression stops early, and the rest kept for the ``final`` look. The shares
    add up to the check's alpha: a union bound, valid whatever the dependence between the
    looks."""
    check = alpha / max(1, family)
    if looks <= 1:
        return check
    if final:
        return check * (1 - INTERIM_SHARE)
    return check * INTERIM_SHARE / (looks - 1)


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
    k = round(u)
    low = sum(counts[: k + 1])
    high = sum(counts[k:])
    return min(1.0, 2 * min(low, high) / total)


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

    p_value: float | None  # one-sided (:func:`worse_p`); None with a single old sample
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
    """Judge whether ``new_samples`` regressed against ``old_samples``, by the rule a run's
    checks against a baseline follow (``iogate compare`` and ``iogate run`` agree).

    ``higher_is_better``: True for throughput, False for latency, None when neither
    direction is better (then a change either way counts, and the p-value is two-sided).
    A regression needs all of:

    - the median moved in the bad direction;
    - by at least ``min_effect_pct`` percent of the old median;
    - a p-value of :func:`worse_p` (the new runs against the old ones' noise) <= ``alpha``,
      when the old side has the 2 samples a test needs; with a single old sample the
      verdict rests on the effect size alone and the reason says so.
    """
    if not old_samples or not new_samples:
        raise ValueError("a regression verdict needs samples on both sides")
    n1, n2 = len(old_samples), len(new_samples)
    effect = effect_pct(median(old_samples), median(new_samples))
    if higher_is_better is None:  # the worse side is the side it moved to: two-sided
        (p, rank_p), bad = worse(old_samples, new_samples, lower_is_worse=effect < 0), \
            effect != 0
        p = None if p is None else min(1.0, 2 * p)
    else:
        p, rank_p = worse(old_samples, new_samples, lower_is_worse=higher_is_better)
        bad = effect < 0 if higher_is_better else effect > 0
    change = f"median {effect:+.1f}%"
    if not bad:
        return Regression(p, effect, False, f"{change}: not in the worse direction")
    if abs(effect) < min_effect_pct:
        return Regression(p, effect, False,
                          f"{change}: below the minimum effect of {min_effect_pct:g}%")
    if p is None:
        return Regression(p, effect, True,
                          f"{change}; the old side has {n1} sample, a test needs 2 (its noise):"
                          " decided by the effect size alone")
    if significant(p, rank_p, alpha):
        return Regression(p, effect, True, f"{change}, p={p:.3g} <= {alpha:g}, n={n1}+{n2}")
    if p <= alpha:
        return Regression(p, effect, False, f"{change}, p={p:.3g} <= {alpha:g}, n={n1}+{n2}, "
                          f"but the runs do not rank below the old ones (rank p={rank_p:.2g}): "
                          "one slow run, not a level")
    return Regression(p, effect, False,
                      f"{change}, but p={p:.3g} > {alpha:g}, n={n1}+{n2}: not significant")


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
