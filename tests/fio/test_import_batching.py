"""fio's submission batching, imported and exported: iodepth_batch_submit (iodepth_batch),
iodepth_batch_complete_min (iodepth_batch_complete), iodepth_batch_complete_max and
iodepth_low; the keys they become with fio's fixes of out-of-range values spelled out, the
notes where fio has no queue to batch, the job file written back, and fio running it."""

from __future__ import annotations

import pytest
from tests.fio.common import needs_fio

from iogate.fio import backend
from iogate.fio.importer import import_jobfile
from iogate.fio.options import job_options, render_jobfile
from iogate.job import JobSpec
from iogate.lower import lower
from iogate.spec import load_suite_text

KiB, MiB = 1 << 10, 1 << 20
FIELDS = ("batch_submit", "batch_complete_min", "batch_complete_max", "depth_low")


def one(body: str) -> tuple[JobSpec, str]:
    text = import_jobfile("one.fio", "[j]\nsize=1m\n" + body)
    (case,) = load_suite_text(text, "one.fio", {}).cases
    spec = lower(case.workload, filenames=case.workload.filenames or ["/var/tmp/x"], seed=1)
    return spec, text


def batching(spec: JobSpec) -> tuple[int, ...]:
    return tuple(getattr(spec, f) for f in FIELDS)


AIO = "ioengine=libaio\niodepth=16\n"


@pytest.mark.parametrize(("body", "expected", "said"), [
    (AIO + "iodepth_batch_submit=8\n", (8, 0, 0, 0), ""),
    (AIO + "iodepth_batch=8\n", (8, 0, 0, 0), ""),  # fio's short name
    (AIO + "iodepth_low=4\n", (0, 0, 0, 4), ""),
    (AIO + "iodepth_batch_complete_max=12\n", (0, 0, 12, 0), ""),
    # fio collects at most the minimum unless the maximum is larger: iogate's default too
    (AIO + "iodepth_batch_complete=4\n", (0, 4, 0, 0), ""),
    (AIO + "iodepth_batch_complete_min=4\niodepth_batch_complete_max=2\n", (0, 4, 4, 0),
     "not larger"),
    (AIO + "iodepth_batch_complete_min=4\niodepth_batch_complete_max=8\n", (0, 4, 8, 0), ""),
    # fio's fixes: 0 and values above iodepth
    (AIO + "iodepth_batch=0\n", (16, 0, 0, 0), "iodepth_batch=0 means iodepth"),
    (AIO + "iodepth_batch=64\n", (16, 0, 0, 0), "takes iodepth_batch=64 as iodepth (16)"),
    (AIO + "iodepth_low=0\n", (0, 0, 0, 16), "iodepth_low=0 means iodepth"),
    (AIO + "iodepth_low=20\n", (0, 0, 0, 16), "as iodepth (16)"),
    (AIO + "iodepth_batch_complete_max=0\n", (0, 0, 0, 0), "0 is fio's default"),
    (AIO + "iodepth_batch_complete_min=0\n", (0, 0, 0, 0), "without waiting"),
    # no queue to batch: fio ignores them
    ("ioengine=psync\niodepth_batch=8\niodepth_low=2\n", (0, 0, 0, 0),
     "fio's psync is synchronous"),
    ("ioengine=libaio\niodepth_batch=8\n", (0, 0, 0, 0), "iodepth is 1"),
])
def test_batching_options_become_keys(body: str, expected: tuple[int, ...], said: str) -> None:
    spec, text = one(body)
    assert batching(spec) == expected
    assert said in text


def test_the_yaml_of_every_option() -> None:
    _, text = one(AIO + "iodepth_batch=8\niodepth_batch_complete_min=2\n"
                  "iodepth_batch_complete_max=16\niodepth_low=4\n")
    for line in ("iodepth_batch_submit: 8\n", "iodepth_batch_complete_min: 2\n",
                 "iodepth_batch_complete_max: 16\n", "iodepth_low: 4\n"):
        assert line in text


# -- export -------------------------------------------------------------------------------

def test_every_batching_field_is_exported() -> None:
    spec = JobSpec(engine="libaio", rw="read", size=MiB, iodepth=16, filename="/var/tmp/x",
                   batch_submit=8, batch_complete_min=2, batch_complete_max=12, depth_low=4)
    opts = dict(job_options(spec))
    assert (opts["iodepth_batch_submit"], opts["iodepth_batch_complete_min"],
            opts["iodepth_batch_complete_max"], opts["iodepth_low"]) == ("8", "2", "12", "4")
    render_jobfile([("j", job_options(spec))])  # every value of a form fio reads


def test_a_minimum_alone_is_exported_alone() -> None:
    # both tools then collect at most the minimum at once
    opts = dict(job_options(JobSpec(engine="libaio", rw="read", size=MiB, iodepth=16,
                                    filename="/var/tmp/x", batch_complete_min=4)))
    assert opts["iodepth_batch_complete_min"] == "4"
    assert "iodepth_batch_complete_max" not in opts


def test_no_batching_writes_no_batching_options() -> None:
    opts = dict(job_options(JobSpec(engine="libaio", rw="read", size=MiB, iodepth=16,
                                    filename="/var/tmp/x")))
    assert not any(k.startswith("iodepth_") for k in opts)


def test_an_exported_job_imports_with_the_same_batching() -> None:
    spec = JobSpec(engine="libaio", rw="read", size=MiB, iodepth=16, filename="/var/tmp/x",
                   batch_submit=8, batch_complete_min=2, batch_complete_max=12, depth_low=4)
    text = import_jobfile("x.fio", render_jobfile([("j", job_options(spec))]))
    (case,) = load_suite_text(text, "x.fio", {}).cases
    back = lower(case.workload, filenames=["/var/tmp/x"], seed=1)
    assert batching(back) == batching(spec)


@needs_fio
def test_fio_runs_the_exported_batching(tmp_path) -> None:
    path = tmp_path / "data"
    path.write_bytes(b"\x07" * MiB)
    spec = JobSpec(engine="libaio", rw="read", size=MiB, iodepth=16, filename=str(path),
                   batch_submit=8, batch_complete_min=4, batch_complete_max=8, depth_low=4)
    job = backend.run([spec]).result.jobs[0]
    assert job.read.ios == MiB // (4 * KiB)
