"""fio's I/O priority options, imported: prio and prioclass, and the command priorities of
its io_uring and libaio engines (cmdprio_percentage, cmdprio_class, cmdprio,
cmdprio_bssplit) become the suite keys of the same names; log_prio is a comment; what fio
refuses, or has only after 3.33, is refused at its line; export writes them back, and the
fio backend counts the prioritized requests from fio's per-priority entries."""

from __future__ import annotations

import pytest
from tests.fio.common import needs_fio

from iogate.errors import SuiteError
from iogate.fio import backend
from iogate.fio.importer import import_jobfile
from iogate.fio.options import FioUnsupported, job_options, render_jobfile
from iogate.job import BsEntry, JobSpec, PrioEntry
from iogate.lower import lower
from iogate.spec import load_suite_text

RT, BE, IDLE = 1 << 13, 2 << 13, 3 << 13


def one(body: str) -> tuple[JobSpec, str]:
    text = import_jobfile("one.fio", "[j]\nsize=1m\n" + body)
    (case,) = load_suite_text(text, "one.fio", {}).cases
    return lower(case.workload, filenames=["/var/tmp/x"], seed=1), text


def refused(body: str) -> str:
    with pytest.raises(SuiteError) as info:
        import_jobfile("one.fio", "[j]\nsize=1m\n" + body)
    return "\n".join(str(p) for p in info.value.problems)


def test_prio_and_prioclass_keep_their_names_with_any_engine():
    spec, text = one("ioengine=psync\nprioclass=3\nprio=2\n")
    assert "prioclass: 3" in text
    assert "prio: 2" in text
    assert spec.ioprio == IDLE | 2


def test_cmdprio_percentage_with_its_class_and_level():
    spec, text = one("ioengine=libaio\nrw=randrw\ncmdprio_percentage=20,10\n"
                     "cmdprio_class=1\ncmdprio=0,3\nlog_prio=1\n")
    assert "cmdprio_percentage: {read: 20, write: 10}" in text, text
    assert "cmdprio_class: 1" in text, text
    assert "cmdprio: {read: 0, write: 3}" in text, text
    assert spec.cmdprio_read == [PrioEntry(0, 200_000, RT)]
    assert spec.cmdprio_write == [PrioEntry(0, 100_000, RT | 3)]
    assert "log_prio=1 (line 8): iogate keeps the latency of the requests issued with the " \
           "command priority apart" in " ".join(text.split("\n  # ")), text


def test_cmdprio_bssplit_keeps_both_forms_per_direction():
    spec, _text = one("ioengine=io_uring\nrw=randrw\nbssplit=64k/40:1024k/60,1024k/100\n"
                      "cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0,1024k/10\ncmdprio=4\n")
    assert spec.cmdprio_read == [PrioEntry(65536, 250_000, RT | 1),
                                 PrioEntry(65536, 750_000, IDLE | 2)]
    assert spec.cmdprio_write == [PrioEntry(1 << 20, 100_000, RT | 4)]


@pytest.mark.parametrize(("body", "said"), [
    ("ioengine=psync\ncmdprio_percentage=20\n",
     "an option of fio's io_uring and libaio engines; this job's ioengine is psync"),
    ("ioengine=libaio\ncmdprio_percentage=20\ncmdprio_bssplit=4k/10\n",
     "cmdprio_percentage and cmdprio_bssplit exclude each other"),
    ("ioengine=libaio\ncmdprio_bssplit=1M/10/2/0/1\n", "newer than fio 3.33"),
    ("ioengine=libaio\ncmdprio_percentage=120\n", "'120' is not an integer from 0 to 100"),
    ("prioclass=5\n", "'5' is not an integer from 0 to 3"),
    ("prio=8\n", "'8' is not an integer from 0 to 7"),
])
def test_what_cannot_be_kept_is_refused_at_its_line(body, said):
    problems = refused(body)
    assert said in problems, problems
    assert "one.fio:" in problems, problems


# -- export and the fio backend -----------------------------------------------------------

def test_export_writes_the_options_back():
    spec = JobSpec(size=1 << 20, engine="libaio", rw="randrw", ioprio=BE | 7, filename="/f",
                   cmdprio_read=[PrioEntry(0, 200_000, RT)],
                   cmdprio_write=[PrioEntry(0, 50_000, IDLE | 3)])
    opts = dict(job_options(spec))
    assert (opts["prioclass"], opts["prio"]) == ("2", "7")
    assert (opts["cmdprio_percentage"], opts["cmdprio_class"], opts["cmdprio"]) == \
        ("20,5", "1,3", "0,3")
    split = JobSpec(size=1 << 20, engine="io_uring", rw="randread", filename="/f",
                    bssplit_read=[BsEntry(65536, 65536, 400_000), BsEntry(1 << 20, 1 << 20,
                                                                         600_000)],
                    cmdprio_read=[PrioEntry(65536, 250_000, RT | 1),
                                  PrioEntry(65536, 750_000, IDLE | 2)])
    assert dict(job_options(split))["cmdprio_bssplit"] == "65536/25/1/1:65536/75/3/2"
    render_jobfile([("j", job_options(split))])  # every value has a form fio reads


def test_export_refuses_what_fio_cannot_say():
    spec = JobSpec(size=1 << 20, engine="io_uring", rw="randread", filename="/f",
                   cmdprio_read=[PrioEntry(0, 123_456, RT)])
    with pytest.raises(FioUnsupported, match="not a whole percent"):
        job_options(spec)


@needs_fio
def test_the_fio_backend_counts_the_prioritized_requests(tmp_path):
    path = tmp_path / "prio.data"
    path.write_bytes(b"\x5a" * (4 << 20))
    spec = JobSpec(size=4 << 20, engine="libaio", rw="randread", iodepth=8,
                   filename=str(path), io_limit_bytes=16 << 20,
                   cmdprio_read=[PrioEntry(0, 250_000, RT)])
    read = backend.run([spec]).result.jobs[0].read
    n = read.ios
    assert n == 4096
    assert read.prio_ios is not None
    assert abs(read.prio_ios - n / 4) <= 5 * (n * 0.25 * 0.75) ** 0.5
    assert read.prio_clat.count == 0  # fio gives each priority its total latency only
