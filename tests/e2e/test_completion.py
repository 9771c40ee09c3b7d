"""Shell completion made from the parser: bash completes subcommands, options, option
choices and files as a user's tab would; zsh loads the script as a completion function."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.cli import build_parser
from iogate.completion import _subcommands

IOGATE = [sys.executable, "-m", "iogate"]


def script(shell: str) -> str:
    proc = subprocess.run([*IOGATE, "completion", shell], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def complete(tmp_path: Path, *words: str) -> list[str]:
    """What bash offers for the last of ``words`` (the command line up to the cursor)."""
    (tmp_path / "c.bash").write_text(script("bash"))
    line = " ".join(f"'{w}'" for w in words)
    proc = subprocess.run(
        ["bash", "-c", f"source c.bash; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
                       '_iogate; printf "%s\\n" "${COMPREPLY[@]}"'],
        cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [w for w in proc.stdout.splitlines() if w]


def test_bash_completes_every_subcommand(tmp_path: Path) -> None:
    names = set(_subcommands(build_parser()))
    assert {"run", "init", "devices", "completion", "compare"} <= names
    assert set(complete(tmp_path, "iogate", "")) >= names
    assert complete(tmp_path, "iogate", "ini") == ["init"]


def test_bash_completes_options_choices_and_files(tmp_path: Path) -> None:
    assert complete(tmp_path, "iogate", "run", "--allow-d") == ["--allow-destructive"]
    assert "--json" in complete(tmp_path, "iogate", "run", "--")
    assert complete(tmp_path, "iogate", "completion", "") == ["bash", "zsh"]
    (tmp_path / "fw.suite.yaml").write_text("suite: fw\n")
    assert complete(tmp_path, "iogate", "run", "fw.") == ["fw.suite.yaml"]
    # an option only another subcommand has is not offered
    assert complete(tmp_path, "iogate", "devices", "--allow") == []


@pytest.mark.skipif(shutil.which("zsh") is None, reason="needs zsh")
def test_zsh_loads_it_as_the_completion_of_iogate(tmp_path: Path) -> None:
    functions = tmp_path / "functions"
    functions.mkdir()
    (functions / "_iogate").write_text(script("zsh"))
    assert subprocess.run(["zsh", "-n", str(functions / "_iogate")]).returncode == 0
    proc = subprocess.run(
        ["zsh", "-f", "-c", f"fpath=({functions} $fpath); autoload -U compinit; "
                            "compinit -u -D; print -r -- $_comps[iogate]"],
        capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "_iogate", proc.stdout + proc.stderr
