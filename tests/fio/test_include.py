"""fio's ``include FILE``: the included options read into the including section, nested
includes, the file found as given or beside the including file, and problems named at the
file and line where each option is written. Job files that name no target (fio's templates,
given --filename on its command line) import, and run once the target is named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.fio.importer import import_jobfile, load_jobfile
from iogate.spec.overrides import parse_overrides


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_included_options_belong_to_the_including_section(tmp_path: Path) -> None:
    write(tmp_path / "jobs" / "common.fio", "rwmixread=30\ninclude deeper.fio\n")
    write(tmp_path / "jobs" / "deeper.fio", "; nested\nbs=8k\n")
    job = write(tmp_path / "jobs" / "main.fio",
                "[global]\nsize=1m\nfilename=/var/tmp/x\n"
                "[a]\nrw=randrw\ninclude common.fio\n[b]\nrw=randrw\n")
    suite = load_jobfile(job)
    a, b = (c.workload for c in suite.cases)
    assert (a.rwmixread, a.bs.read) == (30, 8192)
    assert (b.rwmixread, b.bs.read) == (50, 4096)  # not in [b]: fio's defaults


def test_an_include_in_global_applies_to_every_job(tmp_path: Path) -> None:
    write(tmp_path / "g.fio", "bs=8k\n")
    job = write(tmp_path / "main.fio", "[global]\ninclude g.fio\nsize=1m\n"
                                       "filename=/var/tmp/x\n[a]\n[b]\nbs=2k\n")
    assert [c.workload.bs.read for c in load_jobfile(job).cases] == [8192, 2048]


def test_problems_name_the_included_file_and_its_line(tmp_path: Path) -> None:
    inc = write(tmp_path / "inc.fio", "bs=4k\ngtod_cpu=0\n")
    job = write(tmp_path / "main.fio", "[a]\nsize=1m\ninclude inc.fio\nrw=radnread\n")
    with pytest.raises(SuiteError) as err:
        import_jobfile(job)
    shown = [str(p) for p in err.value.problems]
    assert shown[0].startswith(f"{job}:4:1: [a] rw=radnread")
    assert shown[1].startswith(f"{inc}:2:1: [a] gtod_cpu=0")


@pytest.mark.parametrize(("files", "message"), [
    ({"main.fio": "[a]\nsize=1m\ninclude missing.fio\n"}, "include missing.fio: "),
    ({"main.fio": "[a]\nsize=1m\ninclude loop.fio\n", "loop.fio": "include main.fio\n"},
     "include main.fio: the file includes itself (through main.fio -> loop.fio)"),
    ({"main.fio": "[a]\nsize=1m\ninclude s.fio\n", "s.fio": "[b]\nbs=4k\n"},
     "an included file has no sections"),
    ({"main.fio": "include x.fio\n[a]\nsize=1m\n", "x.fio": "bs=4k\n"},
     "comes before any \\[section\\]"),
])
def test_includes_fio_cannot_follow_are_refused(tmp_path: Path, files: dict[str, str],
                                                 message: str) -> None:
    for name, text in files.items():
        write(tmp_path / name, text)
    with pytest.raises(SuiteError, match=message.replace("(", r"\(").replace(")", r"\)")):
        import_jobfile(tmp_path / "main.fio")


def test_a_template_without_target_imports_and_runs_once_it_is_named(tmp_path: Path) -> None:
    write(tmp_path / "inc.fio", "ioengine=psync\nbs=4k\n")
    job = write(tmp_path / "t.fio", "[r]\nrw=read\ninclude inc.fio\n")
    text = import_jobfile(job)
    assert "--set filename=PATH" in " ".join(text.replace("#", " ").split())
    with pytest.raises(SuiteError, match="or name the target: --set filename=PATH"):
        load_jobfile(job)
    target = write(tmp_path / "target.data", "\0" * 65536)
    suite = load_jobfile(job, overrides=parse_overrides([f"filename={target}"]))
    assert suite.cases[0].workload.filename == str(target)
    proc = subprocess.run([sys.executable, "-m", "iogate", "run", str(job), "--set",
                           f"filename={target}", "--json", str(tmp_path / "r.json")],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [case] = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert case["metrics"]["read.bytes"] == 65536  # the file whole, as fio
