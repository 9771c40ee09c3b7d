"""Every plain workload key (iogate.spec.keys.PLAIN) does what its row declares, end to end:
the suite value is lowered to its member of the library's job struct in the engine's units,
fio's export writes its option in fio's unit and fio's import reads it back, the one rule
(the key it needs) is enforced, and the documentation's key reference shows each row.
A key added as a row is tested here without a test of its own."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from iogate.engine import native
from iogate.engine.session import job_struct
from iogate.errors import SuiteError
from iogate.fio.importer import import_jobfile
from iogate.fio.options import job_options
from iogate.fio.vocabulary import FIO_OPTIONS
from iogate.lower import lower
from iogate.spec import load_suite_text
from iogate.spec.keys import PLAIN, JobKeys, Plain

ROOT = Path(__file__).resolve().parents[2]
# A value of each unit in a suite, the engine's value of it, and fio's text of it.
EXAMPLES = {"count": ("3", 3, "3"), "us": ("2ms", 2_000_000, "2000"),
            "size": ("8KiB", 8192, "8192"), "bool": ("true", 1, "1")}
# A value for each key a plain key needs, in a suite and in a fio job.
NEEDED = {"flow": ("2", "flow=2"), "thinktime": ("1ms", "thinktime=1000")}


def _suite(lines: str) -> str:
    return ("suite: p\nworkloads:\n  - name: w\n    ioengine: null\n    rw: randread\n"
            f"    size: 1MiB\n    runtime: 1s\n    time_based: true\n{lines}")


def _needed(row: Plain) -> tuple[str, str]:
    if row.needs is None:
        return "", ""
    assert row.needs in NEEDED, f"add an example of {row.needs} to NEEDED"
    suite_value, fio_line = NEEDED[row.needs]
    return f"    {row.needs}: {suite_value}\n", fio_line + "\n"


@pytest.mark.parametrize("key", sorted(PLAIN))
def test_a_plain_key_goes_to_its_member_and_to_fio_and_back(key: str) -> None:
    row = PLAIN[key]
    suite_value, engine_value, fio_text = EXAMPLES[row.fio_unit]
    need_suite, need_fio = _needed(row)
    (case,) = load_suite_text(_suite(f"    {key}: {suite_value}\n{need_suite}"), "p.yaml",
                              {}).cases
    spec = lower(case.workload, filenames=[], seed=1)
    assert spec.plain == {row.member: engine_value}
    assert getattr(job_struct(spec), row.member) == engine_value
    assert (row.fio, fio_text) in job_options(spec)
    text = import_jobfile("p.fio", f"[j]\nioengine=null\nrw=randread\nsize=1m\n{need_fio}"
                                   f"{row.fio}={fio_text}\n")
    (back,) = load_suite_text(text, "p.fio", {}).cases
    assert lower(back.workload, filenames=[], seed=1).plain == {row.member: engine_value}


@pytest.mark.parametrize("key", sorted(k for k, r in PLAIN.items() if r.needs))
def test_a_plain_key_without_the_key_it_needs_is_refused(key: str) -> None:
    row = PLAIN[key]
    with pytest.raises(SuiteError) as info:
        load_suite_text(_suite(f"    {key}: {EXAMPLES[row.fio_unit][0]}\n"), "p.yaml", {})
    assert f"{key} does nothing without {row.needs}" in str(info.value)


@pytest.mark.parametrize("key", sorted(PLAIN))
def test_a_plain_key_row_is_whole(key: str) -> None:
    row = PLAIN[key]
    assert not JobKeys.model_fields[key].default  # unset is the member's 0, "off"
    assert JobKeys.model_fields[key].description
    assert row.fio in FIO_OPTIONS
    ctype = {f[0]: f[1] for f in native.job_spec_type()._fields_}.get(row.member)
    assert ctype is not None, f"struct iog_job_spec has no member {row.member}"
    assert getattr(ctype, "_type_", None) in tuple("bBhHiIlLqQ")  # an integer


def test_the_key_reference_shows_each_row() -> None:
    spec = importlib.util.spec_from_file_location(
        "iogate_reference", ROOT / "docs" / "_ext" / "iogate_reference.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sections = module.keys_page().split("\n### ")
    for key, row in PLAIN.items():
        section = next(s for s in sections if s.startswith(f"`{key}`\n"))
        assert f"**fio:** `{row.fio}`" in section
        assert JobKeys.model_fields[key].description.split()[-1].rstrip(".") in section

