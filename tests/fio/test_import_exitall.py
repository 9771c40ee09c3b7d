"""fio's exitall and exit_what imported as each workload's exitall (one switch for the whole
job file, chosen per job by exit_what: its reporting group, which new_group starts, or every
job running), the refusals where iogate cannot run it as fio does, and the way back: export
and the fio backend write exit_what=stonewall, or reporting groups (new_group) that hold
exactly what each job stops."""

from __future__ import annotations

import pytest

from iogate.errors import SuiteError
from iogate.fio.backend import jobfile
from iogate.fio.exporter import export
from iogate.fio.importer import import_jobfile
from iogate.fio.options import FioUnsupported
from iogate.job import JobSpec
from iogate.lower import exit_masks
from iogate.spec import load_suite_text

JOB = "size=1m\nioengine=null\nrw=read\n"
ALL = (1 << 64) - 1


def exits(text: str) -> dict[str, object]:
    """Each workload's exitall as imported (False: none), and the suite loads."""
    suite = import_jobfile("x.fio", text)
    cases = load_suite_text(suite, "x.fio", {}).cases
    return {c.id: c.workload.exitall for c in cases}


def refused(text: str) -> str:
    with pytest.raises(SuiteError) as info:
        import_jobfile("x.fio", text)
    return "\n".join(str(p) for p in info.value.problems)


def test_exitall_in_global_stops_the_whole_stonewall_group() -> None:
    got = exits(f"[global]\n{JOB}exitall\n[a]\nnumber_ios=5\n[b]\n[c]\nstonewall\n")
    assert got == {"a": True, "b": True, "c": True}


def test_exit_what_group_follows_new_group_reporting_groups() -> None:
    # a and b share a reporting group; c starts another (new_group): each stops its own
    got = exits(f"[global]\n{JOB}exitall=1\n[a]\n[b]\nnumjobs=2\n[c]\nnew_group\n[d]\n")
    assert got == {"a": ["a", "b"], "b": ["a", "b"], "c": ["c", "d"], "d": ["c", "d"]}
    # a job alone in its reporting group stops only its own other threads
    got = exits(f"[global]\n{JOB}exitall\n[a]\nnew_group\n[b]\nnew_group\n")
    assert got == {"a": ["a"], "b": ["b"]}


def test_exit_what_stonewall_stops_every_job_running() -> None:
    got = exits(f"[global]\n{JOB}exitall\n[a]\nexit_what=stonewall\n[b]\nnew_group\n")
    assert got == {"a": True, "b": ["b"]}


def test_exit_what_all_runs_only_after_the_last_stonewall() -> None:
    got = exits(f"[global]\n{JOB}exitall\n[a]\n[b]\nstonewall\nexit_what=all\n[c]\n")
    assert got == {"a": True, "b": True, "c": True}
    said = refused(f"[global]\n{JOB}exitall\n[a]\nexit_what=all\n[b]\nstonewall\n")
    assert "x.fio:7" in said
    assert "never run" in said


def test_exitall_set_in_one_job_is_every_jobs() -> None:
    suite = import_jobfile("x.fio", f"[global]\n{JOB}\n[a]\nexitall\n[b]\n")
    assert "one switch for every job of the file" in suite
    assert exits(f"[global]\n{JOB}\n[a]\nexitall\n[b]\n") == {"a": True, "b": True}


def test_exit_what_without_exitall_is_noted_and_changes_nothing() -> None:
    suite = import_jobfile("x.fio", f"[global]\n{JOB}\n[a]\nexit_what=all\n")
    assert "no exitall: fio ignores it" in suite
    assert exits(f"[global]\n{JOB}\n[a]\nexit_what=all\n") == {"a": False}


@pytest.mark.parametrize(("body", "says"), [
    ("exitall\nexit_what=some\n", "group, stonewall, all"),
])
def test_refusals(body: str, says: str) -> None:
    assert says in refused(f"[a]\n{JOB}{body}")


def test_exitall_on_error_says_the_others_run_to_their_end() -> None:
    suite = import_jobfile("x.fio", f"[global]\n{JOB}[a]\nexitall_on_error\n[b]\n")
    assert "iogate lets the others of the group run to their end" in " ".join(
        suite.replace("#", " ").split())
    assert exits(f"[global]\n{JOB}[a]\nexitall_on_error\n[b]\n") == {"a": False, "b": False}


def test_the_example_exitwhat_maps_each_job() -> None:
    from tests.fio.test_conformance import EXAMPLES
    got = exits((EXAMPLES / "exitwhat.fio").read_text())
    assert got == {"slow1": True, "fast1": ["fast1"], "slow2": True, "fast2": True,
                   "runsnever": True}


# -- the way back ---------------------------------------------------------------------------

def suite(*workloads: str) -> str:
    return "suite: s\nworkloads:\n" + "".join(
        f"  - {{name: {w}, ioengine: null, rw: read, size: 1m, group: g}}\n"
        if ":" not in w else f"  - {{{w}, ioengine: null, rw: read, size: 1m, group: g}}\n"
        for w in workloads)


def exported(text: str) -> tuple[str, list[tuple[str, str]]]:
    loaded = load_suite_text(text, "s.yaml", {})
    out = export(loaded)
    return out.text, out.skipped


def test_export_writes_exit_what_stonewall_and_reporting_groups() -> None:
    # a list of the whole group is exitall: true
    text, skipped = exported(suite("name: a, exitall: [a, b]", "b"))
    assert not skipped
    assert "exit_what=stonewall" in text
    text, skipped = exported(suite("name: a, exitall: true", "b"))
    assert not skipped
    a, b = text.split("[b]")
    assert "exitall=1\nexit_what=stonewall" in a
    assert "new_group" in b  # b's own end stops nothing
    text, skipped = exported(suite("name: a, exitall: [a, b]", "name: b, exitall: [b, a]", "c"))
    assert not skipped
    assert text.count("exitall=1") == 2
    assert "exit_what" not in text
    assert "new_group" in text.split("[c]")[1]


def test_export_refuses_what_reporting_groups_cannot_say() -> None:
    # b's end would stop a too: fio's switch is for every job
    _, skipped = exported(suite("name: a, exitall: [a, b]", "b", "c"))
    assert skipped
    assert "a, b would have to be one" in skipped[0][1]
    # b has two threads: the end of one would stop the other
    _, skipped = exported(suite("name: a, exitall: true", "name: b, numjobs: 2"))
    assert skipped
    assert "threads" in skipped[0][1]


def test_backend_job_file() -> None:
    specs = [JobSpec(engine="null", rw="read", size=1 << 20, exit_mask=ALL),
             JobSpec(engine="null", rw="read", size=1 << 20)]
    text = jobfile(specs)
    assert "exit_what=stonewall" in text
    assert "new_group" in text
    assert "exitall" not in jobfile([specs[1], specs[1]])
    with pytest.raises(FioUnsupported, match="job 1 and job 2"):
        jobfile([JobSpec(engine="null", rw="read", size=1 << 20, exit_mask=0b11),
                 JobSpec(engine="null", rw="read", size=1 << 20),
                 JobSpec(engine="null", rw="read", size=1 << 20)])


def test_masks_follow_the_order_of_the_session() -> None:
    loaded = load_suite_text(suite("name: a, exitall: [c]", "b", "name: c, exitall: true"),
                             "s.yaml", {})
    assert exit_masks([c.workload for c in loaded.cases]) == [0b100, 0, ALL]


def test_a_reporting_group_across_wait_for_is_refused() -> None:
    # fio would stop b, waiting for a, before it ever starts
    said = refused(f"[global]\n{JOB}exitall\n[a]\n[b]\nwait_for=a\n")
    assert "'b'" in said
    assert "wait_for" in said
    assert exits(f"[global]\n{JOB}exitall\nexit_what=stonewall\n[a]\n[b]\nwait_for=a\n") \
        == {"a": True, "b": True}
