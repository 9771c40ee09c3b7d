"""The corpus of real job files that public projects other than fio publish
(``tests/fio/corpus``, each kept byte for byte, its source and licence in ``SOURCES.tsv``),
run side by side: each file made small the same way for both tools, then run by iogate and
by fio 3.33 in a directory of its own.

Made small: ``size``, ``runtime``, ``ramp_time`` and ``startdelay`` are appended to every
section, where fio takes the last value a section gives (its command-line options would lose
to the file's); the absolute targets a file names (devices, mount points) are moved into its
own directory, where they are written. Its ``${VAR}`` templates get the values of
:data:`ENV`.

Three tables say what each file does here: :data:`FIO_FAILS` (fio itself cannot run it here:
not counted), :data:`REFUSED` (fio runs it, the import refuses it, for the reason given: a
miss) and :data:`RUN_ERRORS` (both run it; iogate's case ends in an error for the reason
given). Every other file must run in iogate as in fio (exit 0 or 1). The fio guide's ratio is
rendered from the tables and checked.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.fio.common import needs_fio

CORPUS = Path(__file__).resolve().parent / "corpus"
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "fio.md"
FILES = sorted(p.name for p in CORPUS.glob("*.fio"))
LICENCES = {"MIT", "Apache-2.0", "BSD-3-Clause", "BSD-2-Clause", "GPL-2.0-only",
            "GPL-2.0-or-later", "LGPL-2.1-or-later", "MPL-2.0", "CDDL-1.0", "ISC"}

# The values of the templates' variables ({dir}: the file's own directory).
ENV = {"BLKSIZE": "4k", "BLOCK_SIZE": "4k", "DEPTH": "4", "DEV": "{dir}/dev.dat",
       "DIR": "{dir}", "FILENAME": "{dir}/file.dat", "FILESIZE": "16m", "FILE_SIZE": "16m",
       "JOBS": "2", "LOGINTERVAL": "1000", "MODE": "randread", "NRFILES": "2",
       "NUMJOBS": "2", "OUTPUT": "{dir}", "RAMPTIME": "0", "READ_TYPE": "randread",
       "RRATE": "1000", "RUNTIME": "1", "SIZE": "16m", "SYNC_TYPE": "0", "TESTFS": "{rel}",
       "TIME": "1", "VERIFY_ONLY": "0"}
# Directories the files name relative to where they run, made before they run (fio makes the
# directories of a filename_format itself, iogate does not: the import says so).
SUBDIRS = ("gcs/5mb", "gcs/50mb", "gcs/3mb", "gcs/256kb", "Workload.0", "Workload.1")

# fio 3.33 cannot run these here, made small as above: not counted.
FIO_FAILS: dict[str, str] = {
    "avocado-misc-tests--fio-simple.job.fio": "size too small, must not be less than minimum "
                                              "block size",  # bs=512m
    "mountpoint-s3--seq_read_skip_17m.fio": "size too small, must not be less than minimum "
                                            "block size",  # bs=256m
    "fiosynth--TypeVIwTRIM.fio": "failed parsing offset=${OFFSET2}m",  # its harness's variables
    "fiosynth--rsw_burst.fio": "failed parsing thinktime=${W1THINK}",
}
# fio runs these; the import refuses them, the first problem saying this.
REFUSED: dict[str, str] = {
    "autotest-client-tests--fio-mixed-ppc.job.fio": "verify needs one block size for writes; "
                                                     "bsrange gives several",
}
# Both run these; iogate's case ends in an error saying this.
RUN_ERRORS: dict[str, str] = {}
# These import and are validated, not run: (why).
VALIDATED_ONLY: dict[str, str] = {
    "gcsfuse--seq_rand_read_write.fio": "16 groups of 40 clones each, 640 workloads on 2.3 GiB "
                                        "of files: several minutes here",
}

_SECTION = re.compile(r"^\s*\[[^\]]+\]\s*$")


def prepared(text: str, directory: Path) -> str:
    """The job file made small: the settings appended to every section (fio and iogate both
    take the last value a section gives)."""
    extra = ["size=16m", "runtime=1", "ramp_time=0", "startdelay=0"]
    # absolute targets (a device, a mount point) moved into the file's directory, in place:
    # a second filename= in a section would add a file in fio, not replace one
    text = re.sub(r"^(\s*filename\s*=\s*)(/\S*)", lambda m: m.group(1) + str(
        directory / re.sub(r"[^A-Za-z0-9_.-]", "_", m.group(2).strip("/"))), text,
        flags=re.M)
    text = re.sub(r"^(\s*directory\s*=\s*)/\S*", lambda m: m.group(1) + str(directory),
                  text, flags=re.M)
    out: list[str] = []
    sections = 0
    for line in text.splitlines():
        if _SECTION.match(line):
            if sections:
                out += extra
            sections += 1
        out.append(line)
    return "\n".join([*out, *extra]) + "\n"


def environment(directory: Path) -> dict[str, str]:
    values = {k: v.format(dir=directory, rel=str(directory).lstrip("/"))
              for k, v in ENV.items()}
    return {**os.environ, **values}


def counts() -> tuple[int, int, int]:
    """(files, files fio runs here, of those the files iogate runs)."""
    ran_by_fio = len(FILES) - len(FIO_FAILS)
    return len(FILES), ran_by_fio, ran_by_fio - len(REFUSED)


def guide_line() -> str:
    files, fio_runs, iogate_runs = counts()
    return (f"Of the {files} job files of the corpus, fio 3.33 runs {fio_runs} here and "
            f"iogate {iogate_runs} of those ({100 * iogate_runs / fio_runs:.0f} %; "
            f"{len(VALIDATED_ONLY)} of them only validated by both in the test, for its "
            f"length)")


def test_every_file_has_its_source_and_licence():
    with open(CORPUS / "SOURCES.tsv", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert sorted(r["file"] for r in rows) == FILES
    assert all(r["repository"] and r["path"] and r["licence"] in LICENCES for r in rows), rows
    assert all("axboe/fio" not in r["repository"] for r in rows)


def test_the_tables_name_only_files_of_the_corpus():
    for table in (FIO_FAILS, REFUSED, RUN_ERRORS, VALIDATED_ONLY):
        assert set(table) <= set(FILES)
    assert not set(FIO_FAILS) & (set(REFUSED) | set(RUN_ERRORS) | set(VALIDATED_ONLY))


def test_the_guide_states_the_ratio_of_the_tables():
    assert guide_line() in " ".join(GUIDE.read_text().split())


@needs_fio
@pytest.mark.parametrize("name", FILES)
def test_a_file_fio_runs_runs_in_iogate_or_is_refused_as_expected(name: str, workdir: Path):
    directory = workdir / re.sub(r"[^A-Za-z0-9_-]", "_", name)
    directory.mkdir()
    for sub in SUBDIRS:
        (directory / sub).mkdir(parents=True)
    job = directory / "job.fio"
    job.write_text(prepared((CORPUS / name).read_text(), directory))
    env = environment(directory)
    command = ["validate", job.name] if name in VALIDATED_ONLY else \
        ["run", job.name, "--json", "iogate.json"]
    mine = subprocess.run([sys.executable, "-m", "iogate", *command], cwd=directory, env=env,
                          capture_output=True, text=True, timeout=300)
    # what iogate only validates, fio only parses (--parse-only): the same options read
    checking = ["--parse-only"] if name in VALIDATED_ONLY else []
    theirs = subprocess.run(["fio", *checking, "--output-format=json", "--output=fio.json",
                             job.name],
                            cwd=directory, env=env, capture_output=True, text=True,
                            timeout=300)
    said = mine.stderr
    if name in FIO_FAILS:
        assert theirs.returncode != 0
        assert FIO_FAILS[name] in theirs.stderr + theirs.stdout
        return
    assert theirs.returncode == 0, theirs.stderr
    if name in REFUSED:
        assert mine.returncode == 2, said
        assert REFUSED[name] in said.splitlines()[0], said
    elif name in RUN_ERRORS:
        assert mine.returncode == 3, said
        assert RUN_ERRORS[name] in said, said
    else:
        assert mine.returncode in (0, 1), said
