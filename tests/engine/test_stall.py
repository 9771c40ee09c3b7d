"""Coordinated omission: a device that stalls for a second under a rate limit shows the
second in resp percentiles, while lat, measured from issue, hides it.

The stall comes from the fault-injection shim (tests/faults), which makes one pread(2)
of the data file sleep; the run happens in a child process so that the shim is loaded
before anything else. The psync engine issues one request at a time, so every request due
during the stall waits behind it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.faults import build, run_python, shim_env

STALL_NS = 1_000_000_000
RATE = 200  # reads per second
SECONDS = 3

CHILD = """
import json, sys
from iogate.engine.session import run
from iogate.job import JobSpec
s = JobSpec(engine="psync", rw="randread", bs_read=4096, bs_write=4096, iodepth=1, numjobs=1,
            size=4 << 20, offset=0, runtime_ns={runtime}, ramp_ns=0, time_based=True,
            direct=False, rwmixread=100, filename=sys.argv[1], rate_iops_read={rate})
r = run([s])
print(json.dumps({{k: r.metric(k) for k in ("read.ios", "read.lat.p99", "read.lat.max",
                  "read.resp.p50", "read.resp.p90", "read.resp.p99", "read.resp.max",
                  "read.lag.p99", "read.rate_pct")}}))
"""


def run_child(data: Path, env_extra: dict[str, str]) -> dict[str, float]:
    data.write_bytes(os.urandom(4 << 20))  # laid out in advance: layout does no preads
    env = {**os.environ, **env_extra}  # the same interpreter and installed package
    code = CHILD.format(runtime=SECONDS * 10**9, rate=RATE)
    return json.loads(run_python(code, str(data), env=env).stdout)


def test_resp_shows_a_stall_that_lat_hides(tmp_path):
    data = tmp_path / "data.bin"
    # the read half a second into the run stalls, once
    stalled = run_child(data, shim_env(str(data), op="read", mode="stall", after=RATE // 2 - 1,
                                       count=1, stall_ms=STALL_NS // 1_000_000))
    # The stalled read itself has lat ~1 s, but it is 1 of ~600: lat's p99 does not see it.
    # (Lower bounds are certain: a sleep is never shorter. Upper bounds only separate the
    # stall from everything else, by half of it, so that a busy machine cannot cross them.)
    assert stalled["read.lat.max"] >= 0.9 * STALL_NS
    assert stalled["read.lat.p99"] < 0.5 * STALL_NS
    # About RATE requests were due during the stall (a third of the run); each waited for
    # the rest of it, so resp's p90 sits in the stall and p99 near its full length.
    assert stalled["read.resp.p99"] >= 0.8 * STALL_NS
    assert stalled["read.resp.p90"] >= 0.3 * STALL_NS
    assert stalled["read.lag.p99"] >= 0.7 * STALL_NS
    # The schedule is fixed in advance: the late requests are issued, not skipped.
    assert stalled["read.rate_pct"] >= 95


def test_without_the_stall_resp_stays_small(tmp_path):
    # The shim loaded but told to do nothing: no request waits anywhere near a stall, and
    # the schedule is kept (its requests are issued, late ones as soon as possible).
    calm = run_child(tmp_path / "data.bin", {"LD_PRELOAD": str(build("faultshim"))})
    assert calm["read.resp.p99"] < 0.5 * STALL_NS
    assert calm["read.ios"] >= 0.5 * RATE * SECONDS
