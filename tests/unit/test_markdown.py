"""The Markdown summary, read back with a real CommonMark parser (markdown-it-py, with GitHub's
tables): a row per case whose cells hold the ids as they are, however hostile, a section per
case that did not pass listing the failed checks as the failure reports say them, and an
escape that any text survives."""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from iogate import markdown
from iogate.report import failed_check_texts, failure_report
from iogate.runner import run_cases
from iogate.spec import load_suite

SUITE = """\
suite: md
defaults:
  ioengine: null
  rw: randread
  bs: 4k
  size: 1MiB
workloads:
  - name: good
    expect:
      read.iops: ">= 1"
  - name: slow
    expect:
      read.clat.p99: "<= 1h"
      read.iops: ">= 1000G"
  - name: mixed
    rw: randrw
    expect:
      read.iops: ">= 1000G"
      write.iops: ">= 2000G"
"""

# A file name with every character that means something in a table or inline Markdown.
HOSTILE = "a|b*c_`d`<e>[f](g)#~&$@:x:.suite.yaml"


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table").enable("strikethrough")


def _text(inline) -> str:
    """The literal text of an inline token, as a reader sees it."""
    return "".join(c.content for c in inline.children or []
                   if c.type in ("text", "text_special", "code_inline"))


@dataclass
class Summary:
    """What a summary shows, as parsed."""

    headline: str = ""
    paragraphs: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    sections: dict[str, list[str]] = field(default_factory=dict)  # h3 -> its list items
    code: list[str] = field(default_factory=list)  # fenced blocks
    headlines: list[str] = field(default_factory=list)  # every h2: one per summary


def parse_summary(text: str) -> Summary:
    """Parse a summary with markdown-it; the structure it found."""
    out = Summary()
    tokens = _parser().parse(text)
    section: list[str] | None = None
    cell: str | None = None
    row: list[str] = []
    for i, t in enumerate(tokens):
        if t.type == "heading_open":
            title = _text(tokens[i + 1])
            if t.tag == "h2":
                out.headlines.append(title)
                out.headline = out.headline or title
            else:
                section = out.sections.setdefault(title, [])
        elif t.type in ("th_open", "td_open"):
            cell = t.type
        elif t.type == "inline" and cell is not None:
            row.append(_text(t))
        elif t.type in ("th_close", "td_close"):
            cell = None
        elif t.type == "tr_close":
            if out.header:
                out.rows.append(row)
            else:
                out.header = row
            row = []
        elif t.type == "inline" and tokens[i - 1].type == "paragraph_open":
            if tokens[i - 2].type == "list_item_open" and section is not None:
                section.append(_text(t))
            else:
                out.paragraphs.append(_text(t))
        elif t.type == "fence":
            out.code.append(t.content)
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("md") / HOSTILE
    path.write_text(SUITE)
    return [r for c in load_suite(path, env={}).cases for r in run_cases([c])]


def test_a_row_per_case_with_its_id_as_it_is(results) -> None:
    summary = parse_summary(markdown.render(results, {"host": "h|1"}, wall_s=1.25))
    assert [r.outcome for r in results] == ["passed", "failed", "failed"]
    assert summary.header[:2] == ["case", "outcome"]
    assert len(summary.rows) == len(results)
    for row, r in zip(summary.rows, results, strict=True):
        assert len(row) == len(summary.header)  # no '|' of an id split a cell
        assert row[0] == r.id
        assert HOSTILE in row[0]
        assert row[1].endswith(r.outcome)
    # the columns measured, in humane units: a case that wrote nothing has no write figure
    columns = summary.header[2:-1]
    assert columns == ["read IOPS", "read BW", "read clat p99", "write IOPS", "write BW",
                       "write clat p99"]
    good = dict(zip(summary.header, summary.rows[0], strict=True))
    assert good["write IOPS"] == "–"
    assert good["read BW"].endswith("/s")
    assert good["read clat p99"].endswith("s")


def test_the_headline_counts_outcomes_and_names_the_host(results) -> None:
    summary = parse_summary(markdown.render(results, {"host": "h|1", "iogate_version": "9"},
                                            wall_s=1.25, not_run=2))
    assert summary.headline.endswith("iogate: 1 passed, 2 failed, 0 error(s), 2 not run "
                                     "in 1.2s")
    assert summary.paragraphs[0] == "host h|1 · iogate 9"


def test_each_case_that_did_not_pass_lists_its_failed_checks(results) -> None:
    summary = parse_summary(markdown.render(results))
    failing = [r for r in results if r.outcome != "passed"]
    assert list(summary.sections) == [f"❌ {r.id}: failed" for r in failing]
    for r in failing:
        items = summary.sections[f"❌ {r.id}: failed"]
        assert items == failed_check_texts(r)
    slow, mixed = failing
    assert len(summary.sections[f"❌ {mixed.id}: failed"]) == 2
    [only] = summary.sections[f"❌ {slow.id}: failed"]
    assert only.startswith("read.iops ")
    assert only.endswith(", expected >= 1000G")
    # the whole report of each, as the terminal shows it
    assert summary.code == [failure_report(r) + "\n" for r in failing]


def test_an_error_is_said_in_place_of_checks(results) -> None:
    broken = results[0].__class__(case=results[0].case, outcome="error",
                                  error="engine: open | failed: *EIO*")
    summary = parse_summary(markdown.render([broken]))
    assert summary.headline.startswith("⚠️ iogate: 0 passed, 0 failed, 1 error(s)")
    assert "engine: open | failed: *EIO*" in summary.paragraphs


def test_no_cases_is_a_headline_alone() -> None:
    text = markdown.render([], {})
    assert text == "## ✅ iogate: 0 passed, 0 failed, 0 error(s)\n"


@given(st.text(alphabet=st.sampled_from(string.printable + "µ·–"), max_size=60))
def test_any_text_survives_escaping_in_a_cell(text: str) -> None:
    summary = parse_summary(f"| x |\n|--|\n| {markdown.escape(text)} |\n")
    flat = " ".join(text.splitlines())
    assert summary.rows == [[flat.strip(" \t\x0b\x0c")]]


def test_appending_keeps_what_the_file_held(tmp_path: Path, results) -> None:
    out = tmp_path / "summary.md"
    out.write_text("## Build\n\nbuilt")  # another step's summary, no final newline
    markdown.write(str(out), results[:1], {})
    markdown.write(str(out), results[1:], {})
    text = out.read_text()
    assert text.startswith("## Build\n\nbuilt\n\n## ✅ iogate: 1 passed")
    summary = parse_summary(text)
    assert summary.headlines[0] == "Build"
    assert len(summary.headlines) == 3
    assert summary.paragraphs[0] == "built"
