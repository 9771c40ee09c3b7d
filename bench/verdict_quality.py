"""How good iogate's statistical verdicts are: false fails on unchanged builds, regressions
caught on the first slower build, and the runs adaptive repeats spend, at three levels of
this machine's run-to-run noise.

Records real runs once (``--record``): three noise profiles, each the ``read.iops`` of
short time-based runs of one workload through ``iogate run SUITE --json FILE`` (many runs
per invocation with ``repeat``), with or without a busy neighbour beside it:

- ``quiet``: the null engine held to a rate, nothing beside it (CV about 0.1 % or below);
- ``cpu``: the null engine held to a rate its CPU can only just give, a CPU-bound process
  beside it (CV about 3 %);
- ``disk``: 4 KiB random reads with O_DIRECT from a file (pread(2), QD1), a second
  ``iogate run`` beside it doing the same on another file of the same disk (CV about
  12 %).

The values, their CV and how they were made (suite, command, neighbour, load average) are
kept in ``bench/verdict_noise.json``; by default the figures come from that file.

Then, with no I/O, each profile's values are normalized to their median (so a regression
is a factor) and resampled without replacement into baseline references and observed
runs, judged by iogate's own code: :func:`iogate.judge.verdict_against` with
``read.iops: ">= 0.95 * baseline"``, a :class:`iogate.judge.Gate` of alpha 0.05, minimum
effect 5 % and the family of the run's statistical checks, ``looked`` as
:func:`iogate.judge.looks` gives it. Adaptive repeats ``{min: N, max: M}`` do what the
runner's ``_repeats`` does: N runs, then one more while the check is not decided
(``Check.evidence.decided``), at most M. A fixed ``repeat: R`` judges R runs once. The
baseline reference is 5 recorded runs (the last column: 3). Each check of a 20-check suite
is its own case with its own runs, as a suite of 20 workloads each with one check is.

    .venv/bin/python bench/verdict_quality.py                  # the figures, a few minutes
    .venv/bin/python bench/verdict_quality.py --record         # record the profiles anew

``--trials``, ``--seed``, ``--jobs`` (processes), ``--json FILE`` (every figure). ``--rule``
judges with a changed rule instead of iogate's (an experiment; ``real``, the default, is
iogate's own code).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import iogate.judge as judging
from iogate import stats
from iogate.expect import evaluate, parse_expectation
from iogate.judge import Gate, looks, verdict_against

HERE = Path(__file__).resolve().parent
NOISE = HERE / "verdict_noise.json"
METRIC = "read.iops"
EXPECT = ">= 0.95 * baseline"
ALPHA = 0.05
MIN_EFFECT = 5.0
SUITE_SIZE = 20  # checks in a suite: the Gate's family
FACTORS = (0.95, 0.90, 0.75, 0.25)  # regressions of -5, -10, -25 and -75 %


@dataclass(frozen=True)
class Profile:
    """How one noise profile is recorded: the workload's YAML lines (``{dir}``: a scratch
    directory on /var/tmp), a neighbour started beside it (argv; ``{python}`` and
    ``{dir}`` are filled in) and its own suite if it is an iogate run."""

    name: str
    about: str
    target_cv: float
    workload: str
    runtime: str
    neighbour: tuple[str, ...] = ()
    neighbour_suite: str = ""


PROFILES = (
    Profile("quiet", "null engine, rate_iops 20000, 0.3 s runs, nothing beside it", 0.1,
            "ioengine: null\nrw: randread\nbs: 4k\nsize: 64MiB\nrate_iops: 20000", "300ms"),
    Profile("cpu", "null engine, rate_iops 1500000 (near what it can give), 0.3 s runs, a "
            "CPU-bound python beside it", 3.0,
            "ioengine: null\nrw: randread\nbs: 4k\nsize: 64MiB\nrate_iops: 1500000", "300ms",
            ("{python}", "-c", "while 1: pass")),
    Profile("disk", "psync O_DIRECT 4k random reads QD1 from a 256 MiB file, 0.3 s runs, a "
            "second iogate run beside it (the same reads from another file)", 12.0,
            "ioengine: psync\ndirect: true\nrw: randread\nbs: 4k\nsize: 256MiB\n"
            "filename: {dir}/target.dat", "300ms",
            ("{python}", "-m", "iogate", "run", "{dir}/neighbour.suite.yaml"),
            "suite: neighbour\nworkloads:\n  - name: busy\n    ioengine: psync\n"
            "    direct: true\n    rw: randread\n    bs: 4k\n    size: 256MiB\n"
            "    filename: {dir}/neighbour.dat\n    runtime: 1h\n    time_based: true\n"),
)


def suite_text(p: Profile, repeat: int, scratch: Path) -> str:
    lines = p.workload.format(dir=scratch).splitlines()
    lines += [f"runtime: {p.runtime}", "time_based: true", f"repeat: {repeat}"]
    body = "".join(f"    {line}\n" for line in lines)
    return f"suite: noise-{p.name}\nworkloads:\n  - name: {p.name}\n{body}"


@contextmanager
def neighbour(p: Profile, scratch: Path) -> Iterator[None]:
    """The profile's neighbour running (in a session of its own) while the block runs."""
    if not p.neighbour:
        yield
        return
    if p.neighbour_suite:
        (scratch / "neighbour.suite.yaml").write_text(p.neighbour_suite.format(dir=scratch))
    argv = [a.format(python=sys.executable, dir=scratch) for a in p.neighbour]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        time.sleep(2.0)  # started, its file laid out
        if proc.poll() is not None:
            raise SystemExit(f"the neighbour {argv} exited at once ({proc.returncode})")
        yield
    finally:
        proc.send_signal(signal.SIGINT)  # an iogate run ends cleanly on the first one
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def record_profile(p: Profile, invocations: int, repeat: int, scratch: Path) -> dict:
    suite = scratch / f"noise-{p.name}.suite.yaml"
    suite.write_text(suite_text(p, repeat, scratch))
    doc = scratch / "run.json"
    values: list[float] = []
    load_before = os.getloadavg()
    with neighbour(p, scratch):
        for i in range(invocations):
            for attempt in range(3):  # a crash (the library rebuilt under it) runs again
                proc = subprocess.run([sys.executable, "-m", "iogate", "run", str(suite),
                                       "--json", str(doc)], capture_output=True, text=True,
                                      timeout=600)
                if proc.returncode in (0, 1):
                    break
                print(f"{p.name}: a run failed ({proc.returncode}), attempt {attempt + 1}: "
                      f"{proc.stderr.strip()}", file=sys.stderr)
            else:
                raise SystemExit(f"{p.name}: the runs keep failing")
            got = json.loads(doc.read_text())["cases"][0]["samples"][METRIC]
            values += got
            print(f"{p.name} {i + 1}/{invocations}: {len(got)} runs, median "
                  f"{statistics.median(got):.1f}, cv {cv_pct(got):.2f} %", file=sys.stderr)
    load_after = os.getloadavg()
    shown = suite_text(p, repeat, Path("$SCRATCH"))
    return {"about": p.about, "recorded": time.strftime("%Y-%m-%d %H:%M %Z"),
            "iogate_commit": commit(), "target_cv_pct": p.target_cv, "metric": METRIC,
            "suite": shown, "command": "python -m iogate run SUITE --json run.json",
            "invocations": invocations, "repeat": repeat,
            "neighbour": shlex.join(p.neighbour).replace("{python}", "python").replace(
                "{dir}", "$SCRATCH") or None,
            "neighbour_suite": p.neighbour_suite.replace("{dir}", "$SCRATCH") or None,
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in load_after],
            "n": len(values), "median": statistics.median(values), "cv_pct": cv_pct(values),
            "values": [round(v, 3) for v in values]}


def record(out: Path, names: Sequence[str], invocations: int, repeat: int) -> None:
    data = json.loads(out.read_text()) if out.exists() else {"profiles": {}}
    scratch = Path(tempfile.mkdtemp(prefix="iogate-vq-", dir=os.environ.get("TMPDIR",
                                                                           "/var/tmp")))
    try:
        for p in PROFILES:
            if p.name in names:
                data["profiles"][p.name] = record_profile(p, invocations, repeat, scratch)
    finally:
        for f in scratch.iterdir():
            f.unlink()
        scratch.rmdir()
    data.update({"recorded": time.strftime("%Y-%m-%d %H:%M %Z"),
                 "machine": {"kernel": platform.release(), "cpus": os.cpu_count(),
                             "python": platform.python_version()},
                 "iogate_commit": commit(),
                 "profiles": {p.name: data["profiles"][p.name] for p in PROFILES
                              if p.name in data["profiles"]}})
    out.write_text(json.dumps(data, indent=1) + "\n")


def commit() -> str:
    """The checkout's commit (its working tree may differ: the runs used what was built)."""
    return subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()


def cv_pct(values: Sequence[float]) -> float:
    return statistics.stdev(values) / statistics.fmean(values) * 100


# -- the verdicts, resampled ----------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """How many runs a case makes: ``repeat: least`` when least == most, else adaptive."""

    least: int
    most: int
    baseline: int = 5  # runs of the baseline reference

    @property
    def label(self) -> str:
        runs = f"repeat {self.least}" if self.least == self.most else \
            f"{{{self.least}..{self.most}}}"
        return runs if self.baseline == 5 else f"{runs} b{self.baseline}"

    @property
    def adaptive(self) -> bool:
        return self.most > self.least


PLANS = (Plan(2, 2), Plan(3, 3), Plan(5, 5), Plan(3, 8), Plan(3, 8, baseline=3))
EXPECTATION = parse_expectation(METRIC, EXPECT)


def judged(values: Sequence[float], plan: Plan, factor: float, gate: Gate,
           rng: random.Random) -> tuple[bool, int]:
    """One check: a baseline of ``plan.baseline`` runs and the runs of a build whose true
    value is ``factor`` times it, drawn without replacement from ``values``; whether the
    check passed, and on how many runs."""
    draw = rng.sample(values, plan.baseline + plan.most)
    reference, later = draw[:plan.baseline], [v * factor for v in draw[plan.baseline:]]
    case = SimpleNamespace(repeat=plan.least, repeat_max=plan.most)
    looked = looks(case)  # type: ignore[arg-type]
    runs = plan.least
    while True:  # the runner's _repeats: one more while a check is not decided
        check = verdict_against(EXPECTATION, reference, later[:runs], gate, looked=looked,
                                most=plan.most)
        done = check.evidence is None or check.evidence.decided
        if runs == plan.most or done:
            return check.passed, runs
        runs += 1


def cell(task: tuple[str, str, list[float], Plan, float, int, int, int, str]) -> dict:
    """One cell of the table: ``kind`` "unchanged" (checks alone, and runs of a 20-check
    suite) or "regressed" (the regressed check, in a suite and alone)."""
    kind, profile, values, plan, factor, family, trials, seed, rule = task
    use_rule(rule)
    cpu = time.process_time()
    rng = random.Random(f"{seed}/{profile}/{kind}/{plan.label}/{factor}/{family}")
    if kind == "unchanged":
        one = Gate(alpha=ALPHA, min_effect_pct=MIN_EFFECT, family=1)
        alone = [judged(values, plan, 1.0, one, rng) for _ in range(trials)]
        suite = Gate(alpha=ALPHA, min_effect_pct=MIN_EFFECT, family=SUITE_SIZE)
        runs_failed = checks_failed = 0
        spent: list[int] = []
        for _ in range(trials):
            verdicts = [judged(values, plan, 1.0, suite, rng) for _ in range(SUITE_SIZE)]
            failed = sum(not ok for ok, _ in verdicts)
            checks_failed += failed
            runs_failed += failed > 0
            spent += [n for _, n in verdicts]
        return {"alone_failed": sum(not ok for ok, _ in alone), "alone": trials,
                "checks_failed": checks_failed, "checks": trials * SUITE_SIZE,
                "runs_failed": runs_failed, "runs": trials,
                "spent_mean": statistics.fmean(spent), "spent_max": max(spent),
                "alone_spent_mean": statistics.fmean(n for _, n in alone),
                "cpu_s": time.process_time() - cpu}
    gate = Gate(alpha=ALPHA, min_effect_pct=MIN_EFFECT, family=family)
    verdicts = [judged(values, plan, factor, gate, rng) for _ in range(trials)]
    return {"caught": sum(not ok for ok, _ in verdicts), "trials": trials,
            "spent_mean": statistics.fmean(n for _, n in verdicts),
            "spent_max": max(n for _, n in verdicts), "cpu_s": time.process_time() - cpu}


# -- rules to experiment with (--rule); "real" is iogate's own code -------------------------

REAL_WORSE_P = stats.worse_p
REAL_AGAINST = judging.against


def _pooled_worse_p(reference: Sequence[float], observed: Sequence[float], *,
                    lower_is_worse: bool) -> float | None:
    """worse_p with the noise of both sides: the variances of the reference's and the
    observed runs' logarithms pooled, n + k - 2 degrees of freedom (Student's two-sample t);
    iogate's worse_p with a single observed run or a value <= 0."""
    n, k = len(reference), len(observed)
    if n < 2 or k < 2 or min(reference) <= 0 or min(observed) <= 0:
        return REAL_WORSE_P(reference, observed, lower_is_worse=lower_is_worse)
    ref = [math.log(v) for v in reference]
    obs = [math.log(v) for v in observed]
    ref_mean, obs_mean = statistics.fmean(ref), statistics.fmean(obs)
    diff = obs_mean - ref_mean if lower_is_worse else ref_mean - obs_mean
    ss = sum((x - ref_mean) ** 2 for x in ref) + sum((x - obs_mean) ** 2 for x in obs)
    sd = math.sqrt(ss / (n + k - 2))
    if sd == 0:
        return 0.0 if diff < 0 else 1.0
    return 1.0 - stats.t_sf(diff / (sd * math.sqrt(1 / n + 1 / k)), n + k - 2)


def _before_against(e: Any, check: Any, names: Any, reference: Sequence[float],
                    observed: Sequence[float], gate: Gate, name: str, runs: str,
                    looked: int = 1, most: int | None = None) -> Any:
    """The rule iogate judged by before verdicts explained themselves: past its threshold,
    a check passed within the minimum effect (either way) when the reference met the
    expectation, else, with 2 runs a side and sizes that can reach alpha, when a two-sided
    Mann-Whitney test was not significant at alpha itself (no adjustment for the run's
    other checks); otherwise the threshold decided. Repeats were fixed (an adaptive plan
    judged with it stops at its fewest)."""
    if check.passed or check.observed is None:
        return check
    center = names[name]
    if evaluate(e, center, names=names).passed and \
            abs(stats.effect_pct(center, check.observed)) < gate.min_effect_pct:
        return replace(check, passed=True)
    if e.stat not in ("median", "mean"):
        return check
    n1, n2 = len(reference), len(observed)
    if (min(n1, n2) >= 2 and 2 / math.comb(n1 + n2, n1) <= gate.alpha
            and stats.mann_whitney_u(reference, observed)[1] > gate.alpha):
        return replace(check, passed=True)
    return check


RULES: dict[str, tuple[str, Callable[..., float | None], Callable[..., Any]]] = {
    "real": ("iogate's own code", REAL_WORSE_P, REAL_AGAINST),
    "pooled": ("worse_p with the observed runs' noise pooled in, n + k - 2 df (not "
               "monotone: one very bad run widens the noise)", _pooled_worse_p, REAL_AGAINST),
    "before": ("the rule before this benchmark: Mann-Whitney at alpha, unadjusted; fixed "
               "repeats", REAL_WORSE_P, _before_against),
}


def use_rule(name: str) -> None:
    _, worse_p, against = RULES[name]
    stats.worse_p = worse_p  # type: ignore[assignment]
    judging.against = against  # type: ignore[assignment]


# -- the table ------------------------------------------------------------------------------

def measure(data: dict, trials: int, seed: int, jobs: int, rule: str) -> dict:
    pools = {name: [v / statistics.median(p["values"]) for v in p["values"]]
             for name, p in data["profiles"].items()}
    tasks = []
    for name, values in pools.items():
        for plan in PLANS:
            tasks.append(("unchanged", name, values, plan, 1.0, SUITE_SIZE, trials, seed, rule))
            for factor in FACTORS:
                for family in (SUITE_SIZE, 1):
                    tasks.append(("regressed", name, values, plan, factor, family, trials,
                                  seed, rule))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(cell, tasks, chunksize=1))
    out: dict[str, Any] = {}
    for (kind, name, _, plan, factor, family, *_), r in zip(tasks, results, strict=True):
        key = "unchanged" if kind == "unchanged" else f"{factor}/{family}"
        out.setdefault(name, {}).setdefault(plan.label, {})[key] = r
    return out


def pct(hits: int, n: int) -> str:
    return f"{hits / n * 100:6.2f} %"


def table(data: dict, cells: dict, trials: int, seed: int, rule: str) -> list[str]:
    machine = data.get("machine", {})
    lines = [f"noise profiles ({NOISE.name}; {machine.get('cpus', '?')} CPUs, Linux "
             f"{machine.get('kernel', '?')}):"]
    for name, p in data["profiles"].items():
        load = f"load average {p['loadavg_before'][0]:.1f} -> {p['loadavg_after'][0]:.1f}"
        ordered = sorted(v / p["median"] for v in p["values"])
        low, high = (ordered[round(q * (len(ordered) - 1))] for q in (0.05, 0.95))
        lines.append(f"  {name:<6} n={p['n']:<4} CV {p['cv_pct']:6.3f} %  5-95 % of runs "
                     f"within {low:.3f}-{high:.3f} x median, min {ordered[0]:.3f}")
        lines.append(f"         {p['about']}")
        lines.append(f"         recorded {p.get('recorded', data.get('recorded', '?'))}, iogate "
                     f"{p.get('iogate_commit', data.get('iogate_commit', '?'))}, {load}")
    se = ", ".join(f"{math.sqrt(q * (1 - q) / trials) * 100:.2f} % at {q * 100:g} %"
                   for q in (0.01, 0.05, 0.5))
    checks = trials * SUITE_SIZE
    lines += [
        "",
        f"check: {METRIC}: \"{EXPECT}\", alpha {ALPHA}, min effect {MIN_EFFECT:g} %; the "
        "baseline is 5 recorded runs (b3: 3)",
        f"rule: {rule} ({RULES[rule][0]}); {trials} trials per cell, seed {seed}",
        "'in 20': one check of a suite of 20 (Gate family 20); 'alone': family 1; "
        "{3..8}: repeat: {min: 3, max: 8}",
        f"standard error of a share over {trials} trials: {se}; the per-check false fails of "
        f"a suite are over {checks} checks",
        "a build at -5 % sits on the threshold itself: about half its runs' medians are above "
        "it",
    ]
    labels = [plan.label for plan in PLANS]
    for name in data["profiles"]:
        c = cells[name]
        title = f"{name} (CV {data['profiles'][name]['cv_pct']:.3g} %)"
        lines += ["", f"{title:<34}" + "".join(f"{x:>12}" for x in labels)]
        rows: list[tuple[str, Callable[[dict], str]]] = [
            ("false fail, check alone", lambda x: pct(x["unchanged"]["alone_failed"],
                                                      x["unchanged"]["alone"])),
            ("false fail, check in 20", lambda x: pct(x["unchanged"]["checks_failed"],
                                                      x["unchanged"]["checks"])),
            ("false fail, run of 20 checks", lambda x: pct(x["unchanged"]["runs_failed"],
                                                           x["unchanged"]["runs"])),
        ]
        for factor in FACTORS:
            for family, where in ((SUITE_SIZE, "in 20"), (1, "alone")):
                rows.append((f"caught {(factor - 1) * 100:+.0f} %, {where}",
                             lambda x, k=f"{factor}/{family}": pct(x[k]["caught"],
                                                                    x[k]["trials"])))
        rows.append(("runs, unchanged, in 20 (mean/max)", lambda x: (
            f"{x['unchanged']['spent_mean']:.2f}/{x['unchanged']['spent_max']}")))
        for factor in FACTORS:
            rows.append((f"runs, {(factor - 1) * 100:+.0f} %, in 20 (mean/max)",
                         lambda x, k=f"{factor}/{SUITE_SIZE}": (
                             f"{x[k]['spent_mean']:.2f}/{x[k]['spent_max']}")))
        for label, show in rows:
            lines.append(f"  {label:<32}" + "".join(f"{show(c[p]):>12}" for p in labels))
    return lines


def targets(data: dict, cells: dict) -> list[str]:
    """Each target: met or missed, by the worst cell (5-run baselines; the b3 column is
    shown, not held to them)."""
    plans = [p for p in PLANS if p.baseline == 5]
    lines = ["", "targets (5-run baseline columns):"]

    def worst(values: list[tuple[float, str]], high_is_bad: bool) -> tuple[float, str]:
        return max(values) if high_is_bad else min(values)

    def say(what: str, value: float, where: str, ok: bool, unit: str = "%") -> None:
        shown = f"{value:.2f} {unit}" if unit == "%" else f"{value:.2f}{unit}"
        lines.append(f"  {what:<52} worst {shown:>8} ({where}): {'met' if ok else 'MISSED'}")

    u = [(name, p, cells[name][p.label]["unchanged"]) for name in cells for p in plans]
    v, w = worst([(x["alone_failed"] / x["alone"] * 100, f"{n}, {p.label}")
                  for n, p, x in u], True)
    say("false fail per check <= 1 %, check alone", v, w, v <= 1)
    v, w = worst([(x["checks_failed"] / x["checks"] * 100, f"{n}, {p.label}")
                  for n, p, x in u], True)
    say("false fail per check <= 1 %, check in a suite of 20", v, w, v <= 1)
    v, w = worst([(x["runs_failed"] / x["runs"] * 100, f"{n}, {p.label}")
                  for n, p, x in u], True)
    say("false fail per run of 20 checks <= 5 %", v, w, v <= 5)
    v, w = worst([(cells[n][p.label][f"0.25/{f}"]["caught"] /
                   cells[n][p.label][f"0.25/{f}"]["trials"] * 100,
                   f"{n}, {p.label}, {'in 20' if f > 1 else 'alone'}")
                  for n in cells for p in plans for f in (SUITE_SIZE, 1)], False)
    say("-75 % caught every time", v, w, v == 100)
    low = [n for n in cells if data["profiles"][n]["target_cv_pct"] <= 3]
    v, w = worst([(cells[n][p.label][f"0.9/{f}"]["caught"] /
                   cells[n][p.label][f"0.9/{f}"]["trials"] * 100,
                   f"{n}, {p.label}, {'in 20' if f > 1 else 'alone'}")
                  for n in low for p in plans if p.adaptive for f in (SUITE_SIZE, 1)], False)
    say("-10 % caught >= 95 % at CV <= 3 %, adaptive", v, w, v >= 95)
    for p in plans:
        if not p.adaptive:
            continue
        spent = [(cells[n][p.label]["unchanged"]["spent_mean"], f"{n}, unchanged")
                 for n in cells]
        spent += [(cells[n][p.label][f"{f}/{SUITE_SIZE}"]["spent_mean"],
                   f"{n}, {(f - 1) * 100:+.0f} %") for n in cells for f in FACTORS]
        v, w = worst(spent, True)
        say(f"{p.label}: mean runs <= 1.5 x {p.least} = {1.5 * p.least:g}", v, w,
            v <= 1.5 * p.least, unit=" runs")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true", help="record the noise profiles "
                        "anew (a few minutes of real runs), then measure")
    parser.add_argument("--profiles", nargs="+", default=[p.name for p in PROFILES],
                        choices=[p.name for p in PROFILES], help="which to record")
    parser.add_argument("--invocations", type=int, default=4,
                        help="iogate run invocations per profile when recording")
    parser.add_argument("--repeat", type=int, default=50, help="runs per invocation")
    parser.add_argument("--noise", type=Path, default=NOISE, help="the recorded profiles")
    parser.add_argument("--trials", type=int, default=2000, help="trials per cell")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="processes that judge")
    parser.add_argument("--rule", choices=sorted(RULES), default="real",
                        help="an experiment: judge with a changed rule")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    if args.record:
        record(args.noise, args.profiles, args.invocations, args.repeat)
    data = json.loads(args.noise.read_text())
    started = time.monotonic()
    cells = measure(data, args.trials, args.seed, args.jobs, args.rule)
    lines = table(data, cells, args.trials, args.seed, args.rule) + targets(data, cells)
    print("\n".join(lines))
    cpu = sum(r["cpu_s"] for by_plan in cells.values() for by_key in by_plan.values()
              for r in by_key.values())
    print(f"\n{time.monotonic() - started:.0f} s, {cpu:.0f} s of CPU in {args.jobs} "
          f"processes (load average {os.getloadavg()[0]:.1f})")
    if args.json:
        args.json.write_text(json.dumps({"trials": args.trials, "seed": args.seed,
                                         "rule": args.rule, "expectation": EXPECT,
                                         "cells": cells}, indent=1) + "\n")


if __name__ == "__main__":
    main()
