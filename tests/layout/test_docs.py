"""The documentation: the README is a front page of at most 400 lines, every relative link of
it and of docs/ leads to a file that exists, the reference pages made from iogate's tables
cover every suite key, metric, fio option and command, and the site builds with every
warning an error (where Sphinx is installed: the ``docs`` extra, which the full test command
installs)."""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from iogate.cli import build_parser
from iogate.fio.vocabulary import ALIASES, FIO_OPTIONS
from iogate.metrics import families, pattern
from iogate.spec.schema import json_schema

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("iogate_reference",
                                                  DOCS / "_ext" / "iogate_reference.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REFERENCE = _reference()


def test_the_readme_is_a_front_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 400
    text = "\n".join(lines)
    # it leads into every guide and reference page
    for page in sorted(DOCS.glob("*/*.md")):
        assert f"(docs/{page.relative_to(DOCS)})" in text, page


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.partition("#")[0]).resolve()
        assert path.exists(), f"{page.relative_to(ROOT)}: a link to {target}, which is missing"


def test_each_reference_page_is_asked_for_once() -> None:
    asked = [m.group(1) for page in DOCS.rglob("*.md")
             for m in REFERENCE.MARKER.finditer(page.read_text(encoding="utf-8"))]
    assert sorted(asked) == sorted(REFERENCE.PAGES)


def test_an_unknown_reference_is_an_error_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="one of keys, metrics"):
        REFERENCE.expand("# x\n\n% iogate-reference: key\n")


def test_the_key_reference_has_every_key() -> None:
    schema = json_schema()
    page = REFERENCE.keys_page()
    headings = set(re.findall(r"^### `([^`]+)`$", page, re.M))
    for props in (schema["properties"], schema["$defs"]["WorkloadEntry"]["properties"],
                  schema["$defs"]["SteadyState"]["properties"]):
        assert set(props) <= headings
    # what a key takes, from the schema: an enum's values, a bound
    section = page.split("### `rw`\n", 1)[1].split("\n### ", 1)[0]
    assert "`randtrimwrite`" in section
    assert "**Default:** `read`" in section


def test_the_metric_reference_has_every_metric() -> None:
    page = REFERENCE.metrics_page()
    for family in families():
        assert f"`{pattern(family)}`" in page
        assert " ".join(family.about.split()).replace("|", "\\|") in page


def test_the_fio_reference_has_every_option() -> None:
    page = REFERENCE.fio_options_page()
    rows = set(re.findall(r"^\| `([^`]+)` \|", page, re.M))
    assert FIO_OPTIONS | set(ALIASES) <= rows
    assert "| `cpumask` | cpus_allowed: the CPUs of the mask, as a list |" in page
    assert "| `pvsync2` | `psync` |" in page


Commands = list[tuple[str, argparse.ArgumentParser]]


def _commands(parser: argparse.ArgumentParser, prog: str) -> Commands:
    found = [(prog, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, f"{prog} {name}")
    return found


def test_the_command_reference_has_every_command_and_option() -> None:
    page = REFERENCE.cli_page()
    commands = _commands(build_parser(), "iogate")[1:]
    assert {"iogate run", "iogate history", "iogate baseline promote"} <= \
        {prog for prog, _ in commands}
    for prog, parser in commands:
        section = page.split(f"# `{prog}`\n", 1)[1]
        section = re.split(r"^#+ `", section, maxsplit=1, flags=re.M)[0]
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(
                    action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            for option in action.option_strings:
                assert f"`{option}" in section or f", {option}" in section, (prog, option)


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    pytest.importorskip("furo")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q",
                           "-b", "html", "-d", str(tmp_path / "doctrees"), str(DOCS),
                           str(tmp_path / "html")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    keys = (tmp_path / "html" / "reference" / "keys.html").read_text(encoding="utf-8")
    assert "fixedbufs" in keys
    assert "iogate-reference" not in keys  # the marker was replaced, not left as a comment
    cli = (tmp_path / "html" / "reference" / "cli.html").read_text(encoding="utf-8")
    assert "--allow-destructive" in cli
