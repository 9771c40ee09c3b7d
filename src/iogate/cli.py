"""The ``iogate`` command: run, validate and describe suites without pytest.

Exit codes: 0 every expectation met, 1 an expectation failed, 2 a suite is invalid (or the
command line is), 3 a runtime error (I/O or engine error), 130 interrupted.
"""

from __future__ import annotations

# Few imports here, none heavy: the command handles interrupts from the first line of main,
# and everything imported before it runs is a moment in which it could not.
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn, TextIO

from iogate import ids, interrupts

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from iogate.errors import Problem
    from iogate.history import Filters
    from iogate.outcome import CaseResult
    from iogate.report import Journal
    from iogate.spec import Case, LoadedSuite
    from iogate.spec.overrides import Overrides
    from iogate.suiterun import SuiteRun

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_RUNTIME, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
SUITE_GLOB = "*.suite.yaml"


def _suite_files(paths: Sequence[str]) -> list[Path]:
    from pathlib import Path

    from iogate.errors import SuiteError

    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files += sorted(p.rglob(SUITE_GLOB))
        elif p.exists():
            files.append(p)
        else:
            raise SuiteError.single(raw, "no such file or directory")
    if not files:
        raise SuiteError.single(" ".join(paths), f"no suite files ({SUITE_GLOB}) found")
    return list({p.resolve(): p for p in reversed(files)}.values())[::-1]  # each file once


def load_suites(paths: Sequence[str], overrides: Overrides | None = None
                ) -> list[LoadedSuite]:
    """Every suite, fio job files (``.fio``, or starting with a [section]) imported, with
    ``overrides`` (``--set``) over their workloads' keys; one SuiteError with the problems
    of all of them. Their warnings (valid, but likely not what was meant) are printed."""
    from dataclasses import replace

    from iogate.errors import SuiteError
    from iogate.fio import is_jobfile
    from iogate.spec import load_suite

    suites, problems = [], []
    for path in _suite_files(paths):
        try:
            if is_jobfile(path):  # fio's vocabulary is loaded for job files alone
                with interrupts.deferred():  # built whole, as iogate.spec's models are
                    from iogate.fio.importer import load_jobfile

                suites.append(load_jobfile(path, overrides=overrides))
            else:
                suites.append(load_suite(path, overrides=overrides))
        except SuiteError as exc:
            problems += exc.problems
    if problems:
        raise SuiteError(problems)
    for suite in suites:
        for w in suite.warnings:
            print(replace(w, message=f"warning: {w.message}"), file=sys.stderr)
    return suites


def _overrides(args: argparse.Namespace) -> Overrides:
    """The workload keys set with ``--set`` (a UsageError for one that cannot work)."""
    from iogate.settings import overrides

    return overrides(args.iogate_set)


def cmd_validate(args: argparse.Namespace) -> int:
    from iogate import admit
    from iogate.errors import SuiteError

    suites = load_suites(args.paths, _overrides(args))
    refused = admit.problems([c for s in suites for c in s.cases])
    if refused:
        raise SuiteError(refused)
    for s in suites:
        print(f"{s.path}: ok, {len(s.cases)} case(s): {', '.join(c.id for c in s.cases)}")
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from iogate.files import check_output

    with interrupts.deferred():  # built whole, as iogate.spec's models are
        from iogate.fio.exporter import export

    if args.output:
        check_output(args.output, "--output")
    suites = load_suites([args.suite], _overrides(args))
    if len(suites) != 1:
        print(f"iogate: export takes one suite file; {args.suite} holds {len(suites)}",
              file=sys.stderr)
        return EXIT_INVALID
    suite = suites[0]
    cases = [c for c in suite.cases if ids.selects(ids.case_id(c), args.k or "")]
    if not cases:
        print(f"iogate: no case matches -k {args.k!r}", file=sys.stderr)
        return EXIT_INVALID
    result = export(suite, filename_override=args.filename, cases=cases)
    for cid, why in result.skipped:
        print(f"iogate: {suite.path.name}::{cid}: not exported: {why}", file=sys.stderr)
    if not result.cases:
        print(f"iogate: no case of {suite.path} can run in fio", file=sys.stderr)
        return EXIT_INVALID
    if not args.output:
        sys.stdout.write(result.text)
        return EXIT_OK
    if not _write_output(args.output, result.text):
        return EXIT_RUNTIME
    print(f"{args.output}: {len(result.cases)} case(s)", file=sys.stderr)
    return EXIT_OK


def _write_output(out: str, data: str | bytes, option: str = "--output") -> bool:
    """Write a command's output file whole or not at all; False (said on stderr) if not."""
    from iogate.files import OutputError, write_whole

    try:
        with interrupts.deferred():
            write_whole(out, data, option)
    except OutputError as exc:
        print(f"iogate: {exc}", file=sys.stderr)
        return False
    return True


def cmd_import(args: argparse.Namespace) -> int:
    from dataclasses import replace
    from pathlib import Path

    from iogate.files import check_output

    with interrupts.deferred():  # built whole, as iogate.spec's models are
        from iogate.fio.importer import import_jobfile

    out = args.output
    if out:
        if Path(out).exists() and Path(out).resolve() == Path(args.jobfile).resolve():
            print(f"iogate: {out} is the job file itself; write the suite elsewhere",
                  file=sys.stderr)
            return EXIT_INVALID
        check_output(out, "--output")
    warned: list[Problem] = []
    text = import_jobfile(args.jobfile, warned=warned)
    for w in warned:
        print(replace(w, message=f"warning: {w.message}"), file=sys.stderr)
    if not out:
        sys.stdout.write(text)
        return EXIT_OK
    if not _write_output(out, text):
        return EXIT_RUNTIME
    print(f"{out}: imported from {args.jobfile}", file=sys.stderr)
    return EXIT_OK


def cmd_baseline_promote(args: argparse.Namespace) -> int:
    """``iogate baseline promote``: a reviewed results document's cases stored in a baseline
    without running them again (those that passed; with --all, every case measured in full),
    merged into the file as --save-baseline does."""
    from pathlib import Path

    from iogate.baseline import BaselineError, left_out_text, promote
    from iogate.files import check_output

    out = args.output
    if Path(out).exists() and Path(out).resolve() == Path(args.results).resolve():
        print(f"iogate: {out} is the results file itself; write the baseline elsewhere",
              file=sys.stderr)
        return EXIT_INVALID
    check_output(out, "--output")
    try:
        baseline, taken, left = promote(args.results, out, include_failed=args.all,
                                        select=args.k)
    except BaselineError as exc:
        print(f"iogate: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        with interrupts.deferred():
            baseline.save(out)
    except BaselineError as exc:
        print(f"iogate: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
    left_out = left_out_text(out, left, "--all")
    if left_out:
        print(f"iogate: {left_out}", file=sys.stderr)
    print(f"{out}: {taken} case(s) promoted from {args.results}", file=sys.stderr)
    return EXIT_OK


def _filters(args: argparse.Namespace) -> Filters:
    from iogate.history import Filters, parse_labels

    return Filters(suite=args.suite, case=args.k, device=args.device, firmware=args.firmware,
                   labels=parse_labels(args.label), since=args.since, until=args.until,
                   build=args.build, commit=args.commit)


HISTORY_USAGE = ("%(prog)s DEST [options]\n"
                 "       %(prog)s accept DEST [RUN_ID] [--label KEY=VALUE] [--build N] "
                 "[--commit SHA] [-k CASE] [--by NAME]")


def cmd_history(args: argparse.Namespace) -> int:
    from iogate.changes import ChangesError
    from iogate.files import check_output
    from iogate.history import HistoryError, render_runs, runs
    from iogate.trend import FigureError

    if args.store == "accept" and args.more:
        return _accept(args)
    if args.store == "accept" or args.more or args.by is not None:
        wrong = ("name the store: history accept DEST [RUN_ID]" if args.store == "accept"
                 else f"unexpected argument(s) {' '.join(args.more)}" if args.more
                 else "--by goes with history accept")
        print(f"usage: {HISTORY_USAGE % {'prog': 'iogate history'}}\n"
              f"iogate history: error: {wrong}", file=sys.stderr)
        return EXIT_INVALID
    for option in ("png", "html"):
        if getattr(args, option) and not args.metric:
            print(f"iogate: --{option} draws the trend of one metric: give --metric M too "
                  "(and -k CASE)", file=sys.stderr)
            return EXIT_INVALID
        if getattr(args, option):
            check_output(getattr(args, option), f"--{option}")
    if (args.png or args.html) and not _trend_drawers():
        print(f"iogate: --{'png' if args.png else 'html'}: {NO_TREND_PLUGIN}", file=sys.stderr)
        return EXIT_INVALID
    try:
        if args.metric:
            return _trend(args)
        rows = runs(args.store, _filters(args))
    except (HistoryError, ChangesError, FigureError) as exc:
        print(_fitted(f"iogate: {exc}", sys.stderr), file=sys.stderr)
        return EXIT_INVALID
    print(_fitted(render_runs(rows)))
    return EXIT_OK


def _accept(args: argparse.Namespace) -> int:
    """``iogate history accept DEST [RUN_ID]``: a run's (or a build's) cases that did not
    pass taken into the norm that history expectations are judged against."""
    from iogate.history import HistoryError, accept, render_accepted, shown

    if len(args.more) > 2:
        print(f"iogate: history accept DEST [RUN_ID]: unexpected argument(s) "
              f"{' '.join(args.more[2:])}", file=sys.stderr)
        return EXIT_INVALID
    for option in ("metric", "png", "html"):
        if getattr(args, option):
            print(f"iogate: --{option} does not go with history accept", file=sys.stderr)
            return EXIT_INVALID
    dest, run_id = args.more[0], (args.more[1] if len(args.more) > 1 else None)
    try:
        accepted = accept(dest, run_id, filters=_filters(args), by=args.by)
    except HistoryError as exc:
        print(_fitted(f"iogate: {exc}", sys.stderr), file=sys.stderr)
        return EXIT_INVALID
    if not accepted:
        print(f"{shown(dest)}: nothing to accept: every case chosen passed or was accepted "
              "before")
        return EXIT_OK
    nruns = len({a.run_id for a in accepted})
    by = f" by {accepted[0].by}" if accepted[0].by else ""
    print(_fitted(f"{shown(dest)}: accepted {len(accepted)} case(s) of {nruns} run(s) into "
                  f"the norm{by}; history expectations are judged against them from now on:\n"
                  + render_accepted(accepted)))
    return EXIT_OK


NO_TREND_PLUGIN = ("the trend is drawn by the plots plugin (iogate_plots), which is not "
                   "installed or is disabled (IOGATE_DISABLE_PLUGINS)")


def _trend_drawers() -> list[object]:
    """The plugins that draw a trend (``iogate_trend_figure``); none without the plots
    plugin. The text output of ``iogate history`` needs none."""
    from iogate.hooks import get_plugin_manager

    return list(get_plugin_manager().hook.iogate_trend_figure.get_hookimpls())


def _trend(args: argparse.Namespace) -> int:
    """``iogate history DEST --metric M``: one series, printed, and with --png or --html
    drawn by a plugin (:func:`iogate.hooks.iogate_trend_figure`)."""
    from iogate import changes, trend
    from iogate.history import load

    series = load(args.store, [args.metric], filters=_filters(args))
    if not series:
        print(f"iogate: no run of the store measured {args.metric} for the cases chosen",
              file=sys.stderr)
        return EXIT_INVALID
    if len(series) > 1:
        names = "\n  ".join(f"{c}{f' on {d}' if d else ''}" for c, d, _ in sorted(series))
        print(f"iogate: {len(series)} series of {args.metric} match; choose one with -k CASE "
              f"(and --device MODEL):\n  {names}", file=sys.stderr)
        return EXIT_INVALID
    ((key, points),) = series.items()
    findings = trend.detect({key: points})
    norm = sum(p.in_norm for p in points)
    print(_fitted(f"{key[0]}{f' on {key[1]}' if key[1] else ''}: {key[2]}: {len(points)} "
                  f"runs, {norm} in the norm (passed or accepted)\n"
                  + trend.render_points(key[2], points)))
    print(_fitted(trend.render(findings, 1, changes.RECENT) if findings else
                  f"{key[0]}: {key[2]}: {len(points)} runs, no change point"))
    forms = [form for form in ("png", "html") if getattr(args, form)]
    if not forms:
        return EXIT_OK
    from iogate.hooks import get_plugin_manager

    drawn = get_plugin_manager().hook.iogate_trend_figure(
        trend=trend.Trend.of(key, points, findings, changes.RECENT), forms=forms)
    missing = [form for form in forms if not (drawn or {}).get(form)]
    if missing:
        raise trend.FigureError(f"--{missing[0]}: no plugin made the file: {NO_TREND_PLUGIN}")
    for form in forms:
        path = getattr(args, form)
        if not _write_output(path, drawn[form], f"--{form}"):
            return EXIT_RUNTIME
        print(f"{path}: trend of {key[2]} over {len(points)} runs", file=sys.stderr)
    return EXIT_OK


def cmd_detect(args: argparse.Namespace) -> int:
    from iogate import trend
    from iogate.changes import ChangesError
    from iogate.files import check_output
    from iogate.history import HistoryError

    if args.json:
        check_output(args.json, "--json")
    try:
        series = trend.load_for(args.store, _filters(args), args.metric)
        findings = trend.detect(series, trend.Options(args.alpha, args.min_change,
                                                      args.min_runs))
    except (HistoryError, ChangesError, ValueError) as exc:
        print(_fitted(f"iogate: {exc}", sys.stderr), file=sys.stderr)
        return EXIT_INVALID
    print(_fitted(trend.render(findings, len(series), args.recent)))
    new = [f for f in findings if f.regression and f.new(args.recent)]
    if args.json:
        import json

        text = json.dumps({"series": len(series), "recent": args.recent,
                           "change_points": trend.as_json(findings, args.recent)}, indent=2)
        if not _write_output(args.json, text + "\n", "--json"):
            return EXIT_RUNTIME
    if new:
        print(f"iogate: {len(new)} regression(s) start among the newest {args.recent} runs "
              "of their series", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from iogate import powerloss
    from iogate.files import Claim, check_apart, check_output
    from iogate.settings import case_files

    if args.json:
        check_output(args.json, "--json")
    suites = load_suites(args.paths, _overrides(args))
    if args.json:  # never over a file the check reads: a state file, a target, a suite
        states, files = case_files([c for s in suites for c in s.cases
                                    if c.workload.verify_state], args.filename)
        check_apart([Claim(args.json, "--json")], [*states, *files])
    return powerloss.run(args, suites)


def cmd_metrics(args: argparse.Namespace) -> int:
    from iogate.metrics import UNITS, families, pattern
    from iogate.text import table, width

    rows = [(pattern(f), UNITS[f.kind],
             f"{f.about} ({f'{f.plugin} plugin' if f.plugin else f.fio or 'not measured'})")
            for f in families()]
    print(table(("metric", "unit", "what (fio's source)"), rows, columns=width(sys.stdout),
                notes=True))
    return EXIT_OK


def cmd_init(args: argparse.Namespace) -> int:
    from iogate.spec import load_suite
    from iogate.starter import StarterError, starter, suite_name

    try:
        text = starter(args.target, writes=args.writes)
    except StarterError as exc:
        print(f"iogate init: {exc}", file=sys.stderr)
        return EXIT_INVALID
    out = args.output or f"{suite_name(args.target)}.suite.yaml"
    try:
        with open(out, "x", encoding="utf-8") as f:  # never over an existing file
            f.write(text)
    except FileExistsError:
        print(f"iogate init: {out} exists; name another file with -o FILE", file=sys.stderr)
        return EXIT_INVALID
    except OSError as exc:
        print(f"iogate init: {out}: {exc.strerror}", file=sys.stderr)
        return EXIT_RUNTIME
    suite = load_suite(out)  # what it wrote is a valid suite (a SuiteError would be a bug)
    print(f"{out}: {len(suite.cases)} case(s) for {args.target}; its first lines say how to "
          "run it", file=sys.stderr)
    return EXIT_OK


def cmd_completion(args: argparse.Namespace) -> int:
    from iogate.completion import script

    print(script(args.shell, build_parser()), end="")
    return EXIT_OK


def cmd_devices(args: argparse.Namespace) -> int:
    from iogate.devices import devices, render
    from iogate.text import width

    print(render(devices(), width(sys.stdout)))
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    import json

    from iogate.spec.schema import json_schema

    print(json.dumps(json_schema(), indent=2))
    return EXIT_OK


def _fitted(text: str, stream: TextIO | None = None) -> str:
    """``text`` wrapped to the width of ``stream``, standard output by default
    (:mod:`iogate.text`)."""
    from iogate.text import fit, width

    return fit(text, width(stream or sys.stdout))


def _say(message: str) -> None:
    print(f"iogate: {message}", file=sys.stderr, flush=True)


K_HELP = ("only cases whose id contains SUBSTRING; within a sweep point, whole names and "
          "values (-k iodepth:1 selects iodepth:1, not iodepth:16)")


def cmd_run(args: argparse.Namespace) -> int:
    import time

    from iogate import report
    from iogate.settings import UsageError
    from iogate.suiterun import Refused, SuiteRun

    # Every output is checked before any work, the plugins' as they are configured (an
    # OutputError as well), then against one another and the files the cases use: a run is
    # never lost to a path found unusable once it is over, nor written over a file it uses.
    try:
        runner = SuiteRun.configure(
            lambda name: getattr(args, "iogate_" + name.replace("-", "_")),
            lambda o: getattr(args, o.dest, None))
    except UsageError as exc:
        print(f"iogate: {exc}", file=sys.stderr)
        return EXIT_INVALID
    suites = load_suites(args.paths, runner.settings.overrides)
    cases = [c for s in suites for c in s.cases
             if ids.selects(ids.case_id(c), args.k or "")]
    if not cases:
        print(f"iogate: no case matches -k {args.k!r}", file=sys.stderr)
        return EXIT_INVALID
    try:
        for text in runner.admit(cases):
            print(_fitted(f"iogate: warning: {text}", sys.stderr), file=sys.stderr)
    except Refused as exc:
        print(_fitted(str(exc), sys.stderr), file=sys.stderr)
        return EXIT_INVALID
    run = runner.settings
    results: list[CaseResult] = []
    # From here on interrupts are held, but while the cases run and while plugins report
    # (interrupts.interruptible): however late one comes, the results are written.
    with interrupts.deferred():
        # Each case is written to the journal as it ends; the results document is assembled
        # from it. Beside the results file when there is one, locked for the run (another
        # run writing there is refused: an OutputError), and left there if the run dies
        # before the document is written.
        journal = report.Journal(run.json)
        written = False
        try:
            started = time.monotonic()  # the summary reports wall time
            usage_error = False

            def run_all() -> None:
                nonlocal usage_error
                usage_error = _run_units(cases, runner, journal, results)

            interrupted = not interrupts.interruptible(run_all)
            if interrupted:  # whatever was under way is dropped; every finished case kept
                print("iogate: interrupted", file=sys.stderr)
            document = runner.document(results, journal)
            if not interrupts.interruptible(lambda: runner.report(results, document)):
                interrupted = True
                print("iogate: interrupted while plugins reported", file=sys.stderr)
            done = runner.write(results, document, journal, time.monotonic() - started,
                                len(cases) - len(results))
            written = done.results_written
            for line, _ in done.said:
                print(line, file=sys.stderr)
            code = _report_run(cases, results, time.monotonic() - started)
            if done.failed or done.baseline_failed:
                code = max(code, EXIT_RUNTIME)
            if interrupted:
                return EXIT_INTERRUPTED
            if usage_error:
                return EXIT_INVALID
            return code
        finally:
            # Kept only when the results file was asked for and not written: it holds the
            # cases.
            journal.close(remove=written)


def _run_units(cases: Sequence[Case], runner: SuiteRun, journal: Journal,
               results: list[CaseResult]) -> bool:
    """Run ``cases`` unit by unit (:func:`iogate.plan.plan`), each finished case journaled,
    added to ``results`` and said on stderr at once, until all ran or one was interrupted;
    True when a case the baseline could not judge ended the run (said on stderr)."""
    from iogate.baseline import BaselineError
    from iogate.plan import expected_bytes, plan
    from iogate.progress import ProgressLine, schedule
    from iogate.text import fit, width

    units = plan(cases)
    planned = schedule(units)  # the position and the ETA of the progress line
    columns = width(sys.stderr)
    for index, unit in enumerate(units):
        label = " + ".join(ids.case_id(c) for c in unit)
        line = ProgressLine(label, stream=sys.stderr, total_bytes=expected_bytes(unit),
                            schedule=planned, unit=index)
        try:
            unit_results = runner.run(unit, on_progress=line, on_phase=line.set_phase,
                                      on_wait=_say)
        except BaselineError as exc:  # no entry, or several, for a case: say which
            print(f"iogate: {exc}", file=sys.stderr)
            return True  # the cases that finished are kept all the same
        finally:
            line.close()
        # A case said finished on stderr is a case in the journal, and the other way.
        with interrupts.deferred():
            for n, result in enumerate(unit_results):
                journal.append(result)
                results.append(result)
                # the position last: what reads "id: outcome" still does
                print(fit(f"{result.id}: {result.outcome}"
                          + (f" ({result.error})" if result.error else "")
                          + f" [{planned.position(index, n)}]", columns), file=sys.stderr)
                for warning in result.warnings:
                    print(fit(f"{result.id}: warning: {warning}", columns), file=sys.stderr)
        if any(r.outcome == "interrupted" for r in unit_results):
            break
    return False


def _report_run(cases: Sequence[object], results: Sequence[CaseResult], wall_s: float) -> int:
    """Print the tables and failure reports of a finished run (which took wall_s); the exit
    code."""
    from iogate import report
    from iogate import text as fitted
    from iogate.outcome import OUTCOMES

    columns = fitted.width(sys.stdout)
    print(report.results_table(results, columns))
    for text in (report.measured_table(results, columns), report.sweep_tables(results, columns),
                 report.hosts_tables(results, columns), report.warnings_text(results, columns)):
        if text:
            print()
            print(text)
    for r in results:
        if r.outcome != "passed":
            print()
            print(report.failure_report(r, columns=columns))
    counts = {o: sum(r.outcome == o for r in results)
              for o in OUTCOMES}
    not_run = len(cases) - len(results)
    print(f"\n{counts['passed']} passed, {counts['failed']} failed, {counts['error']} error(s)"
          + (f", {counts['skipped']} skipped" if counts["skipped"] else "")
          + (f", {counts['crashed']} crashed" if counts["crashed"] else "")
          + (f", {counts['interrupted']} interrupted" if counts["interrupted"] else "")
          + (f", {not_run} not run" if not_run else "")
          + f" in {wall_s:.1f}s")
    outcomes = {r.outcome for r in results}
    if "interrupted" in outcomes:
        return EXIT_INTERRUPTED
    if outcomes & {"error", "crashed"}:
        return EXIT_RUNTIME
    if "failed" in outcomes:
        return EXIT_FAILED
    return EXIT_OK


def _parser_class() -> type[argparse.ArgumentParser]:
    """The parser of the command (argparse is imported when the command line is parsed)."""
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            self.print_usage(sys.stderr)
            print(f"{self.prog}: error: {message}", file=sys.stderr)
            raise SystemExit(EXIT_INVALID)

    return _Parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command's parser. Every command is listed with its help; with ``command``, only
    that one is given its arguments (none for ""; see :func:`_chosen`), so that a command
    does not import what the others' arguments need (verify's reach the suite models);
    without it, every one is (the completion script, the reference)."""
    _Parser = _parser_class()
    parser = _Parser(prog="iogate", description="Declarative storage test suites with I/O SLOs.")
    from iogate import __version__

    parser.add_argument("--version", action="version", version=f"iogate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, about, arguments in COMMANDS:
        subparser = sub.add_parser(name, help=about)
        if command is None or command == name:
            arguments(subparser)
    return parser


def _chosen(argv: Sequence[str]) -> str:
    """The command named on the command line ``argv``: its first word that is not an option
    (the options before a command, --version and --help, take no value); "" if none."""
    return next((word for word in argv if not word.startswith("-")), "")


def _run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("paths", nargs="+", metavar="PATH",
                     help="suite files, fio job files (.fio) or directories")
    run.add_argument("-k", metavar="SUBSTRING", help=K_HELP)
    from iogate.settings import add_options

    add_options(run.add_argument, "--")
    run.set_defaults(func=cmd_run)


def _compare_arguments(compare: argparse.ArgumentParser) -> None:
    from iogate import compare as compare_module

    compare_module.add_arguments(compare)
    compare.set_defaults(func=compare_module.run)


def _export_arguments(export: argparse.ArgumentParser) -> None:
    export.add_argument("suite", metavar="SUITE", help="the suite file")
    export.add_argument("-o", "--output", metavar="FILE",
                        help="write the job file to FILE (default: standard output)")
    export.add_argument("-k", metavar="SUBSTRING", help=K_HELP)
    export.add_argument("--filename", metavar="PATH",
                        help="the target of every case, as with run --filename")
    _set_option(export)
    export.set_defaults(func=cmd_export)


def _set_option(parser: argparse.ArgumentParser) -> None:
    """--set, which a command that loads suites shares with a run."""
    from iogate.settings import add_option

    add_option(parser.add_argument, "--", "set")


def _import_arguments(imp: argparse.ArgumentParser) -> None:
    imp.add_argument("jobfile", metavar="JOB.fio", help="the fio job file")
    imp.add_argument("-o", "--output", metavar="FILE",
                     help="write the suite to FILE (default: standard output)")
    imp.set_defaults(func=cmd_import)


def _validate_arguments(validate: argparse.ArgumentParser) -> None:
    validate.add_argument("paths", nargs="+", metavar="PATH")
    _set_option(validate)
    validate.set_defaults(func=cmd_validate)


def _schema_arguments(schema: argparse.ArgumentParser) -> None:
    schema.set_defaults(func=cmd_schema)


def _verify_arguments(verify: argparse.ArgumentParser) -> None:
    from iogate import powerloss

    powerloss.add_arguments(verify)
    _set_option(verify)
    verify.set_defaults(func=cmd_verify)


def _history_arguments(history: argparse.ArgumentParser) -> None:
    import argparse

    history.usage = HISTORY_USAGE
    history.description = (
        "List the runs of a history store, or the trend of one metric. 'history accept DEST "
        "RUN_ID' (a start of the id will do), or 'history accept DEST --label build=b7' for "
        "every run of a build, takes the cases of the runs that did not pass into the norm "
        "that history expectations are judged against (-k and the other filters narrow which "
        "cases).")
    _store_arguments(history)
    history.add_argument("more", nargs="*", help=argparse.SUPPRESS)
    history.add_argument("--by", metavar="NAME", help="(accept) who accepts, kept with the "
                         "time (default: the user)")
    history.add_argument("--metric", metavar="M", help="the trend of metric M (with -k CASE): "
                         "its value per run and change points")
    history.add_argument("--png", metavar="FILE", help="draw the trend of --metric in FILE")
    history.add_argument("--html", metavar="FILE", help="write the trend of --metric as a "
                         "page: the plot, the change points, every run")
    history.set_defaults(func=cmd_history)


def _detect_arguments(detect: argparse.ArgumentParser) -> None:
    from iogate import changes

    _store_arguments(detect)
    detect.add_argument("--metric", metavar="PATTERN", action="append",
                        help="metrics to look at (repeatable, shell wildcards); default: IOPS, "
                        "bandwidth and clat p50/p99/p99.9")
    detect.add_argument("--alpha", type=float, default=changes.ALPHA, metavar="P",
                        help=f"significance of a change point (default {changes.ALPHA:g})")
    detect.add_argument("--min-change", type=float, default=changes.MIN_CHANGE_PCT,
                        metavar="PCT", help="smallest move of a level that is a change, in "
                        f"percent (default {changes.MIN_CHANGE_PCT:g})")
    detect.add_argument("--min-runs", type=int, default=changes.MIN_RUNS, metavar="N",
                        help="fewest runs on each side of a change point (default "
                        f"{changes.MIN_RUNS})")
    detect.add_argument("--recent", type=int, default=changes.RECENT, metavar="N",
                        help="a regression is new when it starts among the newest N runs of "
                        f"its series (default {changes.RECENT})")
    detect.add_argument("--json", metavar="FILE", help="also write the change points to FILE")
    detect.set_defaults(func=cmd_detect)


def _baseline_arguments(baseline: argparse.ArgumentParser) -> None:
    actions = baseline.add_subparsers(dest="action", required=True, parser_class=type(baseline))
    promote = actions.add_parser(
        "promote", help="store a reviewed results document's cases in a baseline without "
        "running them again (merged into it, as run --save-baseline does)")
    promote.add_argument("results", metavar="RESULTS.json",
                         help="the results document (run --json, pytest --iogate-json)")
    promote.add_argument("-o", "--output", metavar="BASELINE.json", required=True,
                         help="the baseline file (merged into when it exists)")
    promote.add_argument("--all", action="store_true",
                         help="store every case measured in full, failed ones too "
                         "(default: the cases that passed)")
    promote.add_argument("-k", metavar="SUBSTRING", help=K_HELP)
    promote.set_defaults(func=cmd_baseline_promote)


def _metrics_arguments(metrics: argparse.ArgumentParser) -> None:
    metrics.set_defaults(func=cmd_metrics)


def _init_arguments(init: argparse.ArgumentParser) -> None:
    init.add_argument("target", metavar="TARGET",
                      help="a block device, an existing file, or a new file's path")
    init.add_argument("-o", "--output", metavar="FILE",
                      help="where to write it (default: NAME.suite.yaml here; never over an "
                           "existing file)")
    init.add_argument("--writes", action="store_true",
                      help="add cases that write (never for a device carrying data or a file "
                           "iogate did not create)")
    init.set_defaults(func=cmd_init)


def _completion_arguments(completion: argparse.ArgumentParser) -> None:
    completion.add_argument("shell", choices=("bash", "zsh"),
                            help="bash: source <(iogate completion bash); zsh: write it as "
                                 "_iogate in a directory of $fpath")
    completion.set_defaults(func=cmd_completion)


def _devices_arguments(devices: argparse.ArgumentParser) -> None:
    devices.set_defaults(func=cmd_devices)


# The commands, in the order the help lists them: name, what it does, its arguments.
COMMANDS: tuple[tuple[str, str, Callable[[argparse.ArgumentParser], None]], ...] = (
    ("run", "run suites and judge their expectations", _run_arguments),
    ("compare", "compare two results or baseline files", _compare_arguments),
    ("export", "write a suite's cases as a fio job file", _export_arguments),
    ("import", "turn a fio job file into a suite", _import_arguments),
    ("validate", "check suites without running them", _validate_arguments),
    ("schema", "print the JSON Schema of suite files", _schema_arguments),
    ("verify", "after a crash or power cut, check the targets of workloads with verify_state "
     "against what they recorded", _verify_arguments),
    ("history", "list the runs a history store holds, or the trend of one metric; history "
     "accept: take a run's failed cases into the norm", _history_arguments),
    ("detect", "find where metrics changed level across the runs of a history store; exit 1 "
     "when a regression starts among the newest runs", _detect_arguments),
    ("baseline", "manage baseline files", _baseline_arguments),
    ("metrics", "list the metrics expectations can use", _metrics_arguments),
    ("init", "write a commented starter suite for a block device or a file", _init_arguments),
    ("completion", "print the shell completion script", _completion_arguments),
    ("devices", "list the block devices, and whether a run may write each",
     _devices_arguments),
)


def _store_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("store", metavar="DEST", help="the history store (run --history): a "
                        "SQLite file or a postgresql:// URL")
    parser.add_argument("--suite", metavar="SUBSTRING", help="cases of a suite file whose path "
                        "contains SUBSTRING")
    parser.add_argument("-k", metavar="SUBSTRING", help="cases whose id contains SUBSTRING")
    parser.add_argument("--device", metavar="SUBSTRING", help="cases on a device whose model "
                        "contains SUBSTRING")
    parser.add_argument("--firmware", metavar="REV", help="cases on firmware REV")
    parser.add_argument("--label", metavar="KEY=VALUE", action="append",
                        help="runs with this label (repeatable)")
    parser.add_argument("--since", metavar="TIME", help="runs recorded at or after TIME "
                        "(ISO 8601, UTC: 2026-11-24 or 2026-11-24T08:00)")
    parser.add_argument("--until", metavar="TIME", help="runs recorded before TIME")
    parser.add_argument("--build", metavar="N", help="runs of the CI's build number N")
    parser.add_argument("--commit", metavar="SHA", help="runs of a commit (a start of its "
                        "SHA will do)")


def main(argv: Sequence[str] | None = None, *, hold_signals: bool = False) -> int:
    """The ``iogate`` command with the arguments ``argv`` (default: the process's); its exit
    code. From its first line to its last, SIGINT, SIGTERM and SIGHUP are KeyboardInterrupt,
    which ends the command with EXIT_INTERRUPTED (a run keeps its finished cases first) and
    never with a traceback. Afterwards the previous handlers are back; with ``hold_signals``
    (the process's own entry point) the signals stay blocked instead, so that nothing can
    change the exit code once it is known. A library that cannot be used (IOGATE_LIB
    naming no libiogate of these bindings' ABI) ends it with EXIT_RUNTIME and one line."""
    try:
        with interrupts.handled(hold_after=hold_signals):
            return _command(argv)
    except BaseException as exc:  # an interrupt that came as the command began or ended
        from iogate.errors import LibraryError

        if isinstance(exc, LibraryError):  # no verdict: iogate cannot run at all
            print(f"iogate: {exc}", file=sys.stderr)
            return EXIT_RUNTIME
        if not interrupts.is_interrupt(exc):
            raise
        print("iogate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _command(argv: Sequence[str] | None) -> int:
    from iogate.errors import SuiteError
    from iogate.files import OutputError
    from iogate.settings import UsageError

    try:
        words = sys.argv[1:] if argv is None else argv
        args = build_parser(_chosen(words)).parse_args(words)
        # Every command knows the plugins' metric rows (health.*), which they hand over to
        # iogate.metrics as they load
        from iogate.hooks import get_plugin_manager

        get_plugin_manager()
        return int(args.func(args))
    except SuiteError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_INVALID
    except (OutputError, UsageError) as exc:  # checked before any work: a usage error
        print(f"iogate: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except BrokenPipeError:
        # The reader of the output left (``iogate metrics | head``): nothing more to say.
        # Standard output goes nowhere from now on, so that its last flush fails quietly.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except BaseException as exc:
        if not interrupts.is_interrupt(exc):
            raise
        print("iogate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def entry() -> NoReturn:
    """The process: the ``iogate`` console script and ``python -m iogate``."""
    sys.exit(main(hold_signals=True))


if __name__ == "__main__":
    entry()
