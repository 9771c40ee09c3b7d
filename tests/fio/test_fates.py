"""What the fio option reference says each option becomes (``vocabulary.fate``) is what the
import does: every option said to be refused stops the import at its line, and every other
one imports (at fio's default value where only that is accepted). Each option is imported in
one job that writes with a queued engine and verifies, so the options that matter only to
such jobs are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.fio.importer import load_jobfile
from iogate.fio.vocabulary import ALIASES, AT_DEFAULT, FIO_OPTIONS, fate
from iogate.spec.schema import json_schema

KEYS = set(json_schema()["$defs"]["WorkloadEntry"]["properties"])
OPTIONS = sorted(FIO_OPTIONS | set(ALIASES))
# A value each option is given: fio's default where only that is accepted, else 1 (a value
# of the right kind for most options), else one of these.
VALUES = {"ioengine": "libaio", "verify": "crc32c"}
# What an option needs beside it to be read at all.
BESIDE = {"nrfiles": "directory={dir}/d\n", "filename_format": "directory={dir}/d\nnrfiles=2\n"}


def _job(option: str, where: Path) -> Path:
    name = ALIASES.get(option, option)
    value = VALUES.get(name, AT_DEFAULT.get(name, ("1",))[0])
    beside = BESIDE.get(option, "filename={dir}/target\n").format(dir=where)
    path = where / "job.fio"
    path.write_text(f"[job]\nrw=randwrite\nioengine=libaio\niodepth=4\nverify=crc32c\n"
                    f"size=1m\n{beside}{option}={value}\n")
    return path


@pytest.mark.parametrize("option", OPTIONS)
def test_the_reference_says_what_the_import_does(option: str, tmp_path: Path) -> None:
    said = fate(option, KEYS)
    job = _job(option, tmp_path)
    if said.startswith("refused"):
        with pytest.raises(SuiteError) as info:
            load_jobfile(job)
        assert f"{option}=" in str(info.value)  # at the option's own line
    else:
        try:
            load_jobfile(job)
        except SuiteError as exc:
            assert "is not supported" not in str(exc), said
            assert "unknown fio option" not in str(exc), said


def test_every_refusal_gives_a_reason() -> None:
    for option in OPTIONS:
        said = fate(option, KEYS)
        assert said, option
        assert said.removeprefix("refused: ") != "", option
