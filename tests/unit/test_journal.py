"""The journal of a run: every finished case is on disk as it ends, the results document
assembled from it is the one made from the results in memory, read back through the
journal's own descriptor, and one run at a time holds the journal of a results file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.files import OutputError
from iogate.report import Journal, finish_document, results_document, write_json
from iogate.runner import run_cases
from iogate.spec import load_suite

SUITE = """\
suite: journal
defaults:
  ioengine: null
  rw: randrw
  bs: 4k
  size: 1MiB
  runtime: 20ms
  time_based: true
workloads:
  - name: point
    sweep:
      iodepth: [1, 2, 4]
    expect:
      errors: "== 0"
      read.clat.p99.9: "< 1s"
  - name: lone
    expect:
      write.iops: "> 0"
"""


def _cases(tmp_path: Path):
    path = tmp_path / "journal.suite.yaml"
    path.write_text(SUITE)
    return load_suite(path).cases


def test_the_document_from_the_journal_equals_the_one_from_memory(tmp_path: Path) -> None:
    results = [r for c in _cases(tmp_path) for r in run_cases([c])]
    journal = Journal(tmp_path / "r.json")
    assert journal.path == tmp_path / "r.json.journal"
    for r in results:
        journal.append(r)
    assert len(journal.path.read_text().splitlines()) == len(results)
    from_journal = results_document(results, journal)
    from_memory = results_document(results)
    write_json(tmp_path / "a.json", from_journal)
    write_json(tmp_path / "b.json", from_memory)
    a = json.loads((tmp_path / "a.json").read_text())
    b = json.loads((tmp_path / "b.json").read_text())
    a.pop("created"), b.pop("created")
    assert a == b
    assert [c["id"] for c in from_journal["cases"]] == [r.id for r in results]
    assert from_journal["cases"] == from_memory["cases"]
    assert from_journal["cases"][1] == from_memory["cases"][1]
    # Read through the descriptor: the journal removed, the document is whole all the same.
    journal.path.unlink()
    assert list(from_journal["cases"]) == from_memory["cases"]
    journal.close()


def test_a_named_journal_stays_unless_removed_and_is_held_by_one_owner(tmp_path: Path
                                                                       ) -> None:
    journal = Journal(tmp_path / "r.json")
    with pytest.raises(OutputError, match=rf"another iogate run \(pid {os.getpid()}\) is "
                       rf"writing results to {tmp_path / 'r.json'}"):
        Journal(tmp_path / "r.json")
    journal.close()
    assert journal.path.exists()  # named journals stay until their owner removes them
    again = Journal(tmp_path / "r.json")  # the lock ended with the first
    again.close(remove=True)
    assert not again.path.exists()


def test_a_temporary_journal_has_no_name_to_leave_behind(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("IOGATE_TMPDIR", str(tmp_path))
    journal = Journal()
    assert journal.path is None
    assert list(tmp_path.iterdir()) == []
    document = finish_document([], journal)
    assert list(document["cases"]) == []
    assert not document["cases"]
    journal.close()
    assert list(tmp_path.iterdir()) == []


def test_iogate_run_journals_every_case_and_removes_the_journal(tmp_path: Path) -> None:
    suite = tmp_path / "journal.suite.yaml"
    suite.write_text(SUITE)
    out = tmp_path / "r.json"
    done = subprocess.run([sys.executable, "-m", "iogate", "run", str(suite), "--json", str(out)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert [c["id"].split("::")[1] for c in document["cases"]] == [
        "point[iodepth:1]", "point[iodepth:2]", "point[iodepth:4]", "lone"]
    assert document["summary"]["passed"] == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal.suite.yaml", "r.json"]


def test_a_run_that_dies_late_leaves_a_complete_journal(tmp_path: Path) -> None:
    suite = tmp_path / "journal.suite.yaml"
    suite.write_text(SUITE)
    out = tmp_path / "r.json"
    # The runner dies while the document is being assembled, after every case ended.
    code = ("import os, sys\n"
            "from iogate import cli, report\n"
            "report.call_report_hooks = lambda *a, **k: os._exit(9)\n"
            "sys.exit(cli.main(sys.argv[1:]))\n")
    done = subprocess.run([sys.executable, "-c", code, "run", str(suite), "--json", str(out)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 9, done.stderr
    assert not out.exists()
    lines = (tmp_path / "r.json.journal").read_text().splitlines()
    assert [json.loads(line)["outcome"] for line in lines] == ["passed"] * 4
