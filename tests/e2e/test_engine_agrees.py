"""What the suite's rules accept, the engine accepts: generated workloads are validated by
the suite language (pydantic fields and the rules between them), and every one it accepts
is lowered and given to the library's own validation (a real session, created and never
started), which must not refuse it. ``iogate validate`` asks the library too, so a case the
rules miss is still refused before any I/O, at the line of the key the library names.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iogate import admit
from iogate.errors import SuiteError
from iogate.spec.suite import load_suite_text

IOGATE = [sys.executable, "-m", "iogate"]

MODES = ["read", "write", "rw", "randread", "randwrite", "randrw", "trim", "randtrim",
         "trimwrite", "randtrimwrite"]
ENGINES = ["io_uring", "libaio", "posixaio", "psync", "sync", "mmap", "null"]
SIZES = ["512", "4k", "8k", "64k", "1m"]

KEYS = {
    "ioengine": st.sampled_from(ENGINES),
    "bs": st.sampled_from([*SIZES, "4k,64k"]),
    "bsrange": st.sampled_from(["4k-16k", "512-64k"]),
    "bssplit": st.sampled_from(["4k/80:64k/20", "8k/50:1m/50"]),
    "blockalign": st.sampled_from(["512", "4k", "8k"]),
    "iodepth": st.sampled_from([1, 2, 32, 4096]),
    "numjobs": st.sampled_from([1, 3]),
    "size": st.sampled_from(["4k", "1MiB", "16MiB", "50%"]),
    "offset": st.sampled_from([0, "4k", "1MiB", "25%"]),
    "runtime": st.sampled_from(["1s", "500ms"]),
    "time_based": st.booleans(),
    "ramp_time": st.sampled_from(["0s", "1s"]),
    "direct": st.booleans(),
    "rwmixread": st.sampled_from([0, 30, 100]),
    "rate_iops": st.sampled_from(["1k", "100,50"]),
    "rate": st.sampled_from(["10MiB/s"]),
    "rate_process": st.sampled_from(["linear", "poisson"]),
    "buffer_compress_percentage": st.sampled_from([0, 50, 100]),
    "buffer_compress_chunk": st.sampled_from(["512", "4k"]),
    "refill_buffers": st.booleans(),
    "buffer_pattern": st.sampled_from(["0xdeadbeef", "'abc'"]),
    "zero_buffers": st.booleans(),
    "dedupe_percentage": st.sampled_from([0, 50]),
    "random_distribution": st.sampled_from(["random", "zipf:1.2", "pareto:0.5", "normal:10",
                                            "zoned:60/10:40/90", "sequence:2,0,1"]),
    "random_sequence_stride": st.booleans(),
    "randrepeat": st.booleans(),
    "thinktime": st.sampled_from(["10us"]),
    "thinktime_blocks": st.sampled_from([1, 4]),
    "thinktime_spin": st.sampled_from(["5us", "1ms"]),
    "fsync": st.sampled_from([1, 8]),
    "fdatasync": st.sampled_from([1, 8]),
    "sync": st.sampled_from(["none", "sync", "dsync"]),
    "invalidate": st.booleans(),
    "verify": st.sampled_from(["crc32c", "md5", "sha512", "meta", "none"]),
    "verify_backlog": st.sampled_from([1, 16]),
    "verify_fatal": st.booleans(),
    "io_timeout": st.sampled_from(["1s"]),
    "io_size": st.sampled_from(["64k", "4MiB"]),
    "number_ios": st.sampled_from([1, 100]),
    "end_fsync": st.booleans(),
    "seq_skip": st.sampled_from(["4k", "-8k", "1m"]),
    "flow": st.sampled_from([1, 10]),
    "flow_id": st.sampled_from([0, 2]),
    "flow_sleep": st.sampled_from(["0s", "100us"]),
    "fill_device": st.booleans(),
    "startdelay": st.sampled_from(["0s", "10ms"]),
    "iodepth_batch_submit": st.sampled_from([1, 8]),
    "iodepth_batch_complete_min": st.sampled_from([1, 8]),
    "iodepth_batch_complete_max": st.sampled_from([1, 16]),
    "iodepth_low": st.sampled_from([1, 16]),
    "prioclass": st.sampled_from([2, 3]),
    "prio": st.sampled_from([0, 7]),
    "cmdprio_percentage": st.sampled_from([10, "10,20"]),
    "cmdprio_class": st.sampled_from([1, 3]),
    "cmdprio": st.sampled_from([0, 4]),
}

@st.composite
def workloads(draw: st.DrawFn) -> dict:
    """A workload of a few keys: most sets of many keys break a rule between them, and so
    never reach the engine."""
    keys = draw(st.lists(st.sampled_from(sorted(KEYS)), max_size=6, unique=True))
    return {"name": "w", "rw": draw(st.sampled_from(MODES)),
            **{k: draw(KEYS[k]) for k in keys}}


def test_what_the_rules_accept_the_engine_accepts(tmp_path_factory) -> None:
    accepted: list[dict] = []

    @settings(max_examples=400, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(workload=workloads())
    def check(workload: dict) -> None:
        where = tmp_path_factory.mktemp("agree")
        # a file to name, large enough for any block size drawn, so that what depends on
        # the target (no size, or a share of it) is never what is refused (sparse: no data)
        target = where / "t.dat"
        with open(target, "wb") as f:
            f.truncate(64 << 20)
        if workload.get("ioengine") != "null":
            workload = {**workload, "filename": str(target), "allow_overwrite": True}
        text = json.dumps({"suite": "agree", "workloads": [workload]})
        try:
            suite = load_suite_text(text, where / "agree.suite.yaml")
        except SuiteError:
            return  # refused by the rules: nothing for the engine to say
        accepted.append(workload)
        assert admit.problems(suite.cases) == [], workload

    check()
    # The property says something only if the rules let many workloads through (the
    # examples are the same every run: derandomized).
    assert len(accepted) >= 100, len(accepted)


def test_validate_asks_the_engine_and_names_the_key(tmp_path: Path, monkeypatch) -> None:
    """A rule the suite language lacks (switched off here) is still the engine's: validate
    refuses, at the line of the key the library names, before any I/O."""
    suite = tmp_path / "t.suite.yaml"
    suite.write_text("suite: t\nworkloads:\n  - name: trimskip\n    size: 1MiB\n"
                     "    rw: trim\n    seq_skip: 4k\n")
    from iogate.spec import models
    from iogate.spec import suite as suites

    original = models.workload_rules
    for module in (models, suites):
        monkeypatch.setattr(module, "workload_rules", lambda w: (
            r for r in original(w) if "seq_skip" not in r[0]))
    cases = load_suite_text(suite.read_text(), suite).cases
    (problem,) = admit.problems(cases)
    assert (problem.line, problem.path) == (6, "workloads[0].seq_skip"), problem
    assert ("the engine refuses t.suite.yaml::trimskip: seq_skip applies to sequential jobs "
            "only") in str(problem)


def test_validate_refuses_what_the_engine_cannot_run(tmp_path: Path) -> None:
    suite = tmp_path / "t.suite.yaml"
    suite.write_text("suite: t\nworkloads:\n  - name: trimskip\n    size: 1MiB\n"
                     "    rw: trim\n    seq_skip: 4k\n")
    done = subprocess.run([*IOGATE, "validate", str(suite)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 2, done
    assert f"{suite}:5:5: workloads[0].rw: seq_skip moves the offset of read, write and rw" \
        in done.stderr
    assert not (tmp_path / "t.dat").exists()
