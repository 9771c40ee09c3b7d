"""The command's parser gives each command its arguments alone: built for one command it
parses that command's lines exactly as the whole parser does, and a command imports
nothing that only the other commands' arguments need (a command that reads no suite
imports no suite model)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.cli import COMMANDS, _chosen, build_parser

NAMES = [name for name, _, _ in COMMANDS]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _shape(parser: argparse.ArgumentParser) -> list[tuple[object, ...]]:
    """Every argument of ``parser`` and of its own subcommands, as declared."""
    out: list[tuple[object, ...]] = []
    for a in parser._actions:
        out.append((type(a).__name__, tuple(a.option_strings), a.dest, a.nargs, a.default,
                    a.metavar, a.help, repr(a.choices) if not isinstance(
                        a, argparse._SubParsersAction) else None))
        if isinstance(a, argparse._SubParsersAction):
            out += [(name, *_shape(sub)) for name, sub in a.choices.items()]
    return out


@pytest.mark.parametrize("name", NAMES)
def test_a_command_built_alone_has_the_arguments_of_the_whole_parser(name: str) -> None:
    whole, alone = _subparsers(build_parser())[name], _subparsers(build_parser(name))[name]
    assert _shape(alone) == _shape(whole)
    assert alone.get_default("func") is whole.get_default("func")
    assert alone.format_help() == whole.format_help()


def test_every_command_is_listed_whichever_is_built() -> None:
    assert list(_subparsers(build_parser(""))) == NAMES
    assert build_parser("").format_help() == build_parser().format_help()
    others = _subparsers(build_parser("history"))
    # the others are listed without their arguments: only --help
    assert [a.dest for a in others["run"]._actions] == ["help"]


@pytest.mark.parametrize(("argv", "chosen"), [
    (["run", "s.suite.yaml", "--json", "r.json"], "run"),
    (["--version"], ""),
    (["-h"], ""),
    ([], ""),
    (["history", "h.db", "--metric", "read.iops"], "history"),
    (["nosuch"], "nosuch"),
])
def test_the_command_is_the_first_word_that_is_not_an_option(argv: list[str], chosen: str
                                                             ) -> None:
    assert _chosen(argv) == chosen


def test_an_unknown_command_is_refused_with_the_list_of_commands(
        capsys: pytest.CaptureFixture[str]) -> None:
    from iogate.cli import EXIT_INVALID, main

    with pytest.raises(SystemExit) as exc:
        main(["nosuch"])
    assert exc.value.code == EXIT_INVALID
    err = capsys.readouterr().err
    assert "invalid choice: 'nosuch'" in err
    assert "history" in err


HEAVY = ("iogate.spec", "pydantic", "yaml")
# The modules loaded once the command is over, --help and --version included (argparse
# leaves the process after them).
PROBE = """\
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules))))
from iogate.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(("argv", "code"), [
    (["--help"], 0), (["--version"], 0), (["metrics"], 0), (["compare", "--help"], 0),
    # past the parser, the plugins loaded: refused for a missing file
    (["history", "nosuch.db"], 2), (["detect", "nosuch.db"], 2),
    (["compare", "nosuch.json", "nosuch.json"], 2),
    (["baseline", "promote", "nosuch.json", "-o", "b.json"], 2),
])
def test_a_command_that_reads_no_suite_imports_no_suite_models(
        argv: list[str], code: int, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == code, proc.stderr
    modules = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [m for m in modules if m.startswith(HEAVY)] == []


def test_a_run_still_imports_what_its_arguments_need(tmp_path: Path) -> None:
    # the plugins' options are a run's: its help lists them
    proc = subprocess.run([sys.executable, "-c", PROBE, "run", "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "--json" in proc.stdout
    assert "--artifacts" in proc.stdout  # the plots plugin's option


def test_every_command_knows_the_plugins_metrics(tmp_path: Path) -> None:
    # the health plugin's rows come with the plugins, which the metrics list does not
    # otherwise need
    proc = subprocess.run([sys.executable, "-m", "iogate", "metrics"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "(iogate_health plugin)" in proc.stdout
