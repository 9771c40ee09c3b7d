"""Coordinated omission: a device that stalls for a second under a rate limit shows the
second in resp percentiles, while lat, measured from issue, hides it.

The stall comes from an LD_PRELOAD shim (shim/stall_pread.c) that makes one pread(2)
sleep; the run happens in a child process so that the shim is loaded before anything
else. The psync engine issues one request at a time, so every request due during the
stall waits behind it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SHIM = Path(__file__).parent / "shim" / "stall_pread.c"
STALL_NS = 1_000_000_000
RATE = 200  # reads per second
SECONDS = 3

CHILD = """
import json, sys
from iogate.engine import JobSpec, run
s = JobSpec(engine="psync", rw="randread", bs_read=4096, bs_write=4096, iodepth=1, numjobs=1,
            size=4 << 20, offset=0, runtime_ns={runtime}, ramp_ns=0, time_based=True,
            direct=False, rwmixread=100, filename=sys.argv[1], rate_iops_read={rate})
r = run([s])
print(json.dumps({{k: r.metric(k) for k in ("read.ios", "read.lat.p99", "read.lat.max",
                  "read.resp.p50", "read.resp.p90", "read.resp.p99", "read.resp.max",
                  "read.lag.p99", "read.rate_pct")}}))
"""


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler for the stall shim")
    out = tmp_path_factory.mktemp("shim") / "stall_pread.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(out), str(SHIM), "-ldl"],
                   check=True)
    return out


def run_child(tmp_path: Path, env_extra: dict[str, str]) -> dict[str, float]:
    data = tmp_path / "data.bin"
    data.write_bytes(os.urandom(4 << 20))  # laid out in advance: layout does no preads
    env = {**os.environ, **env_extra}  # the same interpreter and installed package
    code = CHILD.format(runtime=SECONDS * 10**9, rate=RATE)
    done = subprocess.run([sys.executable, "-c", code, str(data)], env=env, check=True,
                          capture_output=True, text=True, timeout=60)
    return json.loads(done.stdout)


def test_resp_shows_a_stall_that_lat_hides(shim, tmp_path):
    stalled = run_child(tmp_path, {"LD_PRELOAD": str(shim), "STALL_AT": str(RATE // 2),
                                   "STALL_NS": str(STALL_NS)})
    # The stalled read itself has lat ~1 s, but it is 1 of ~600: lat's p99 does not see it.
    assert stalled["read.lat.max"] >= 0.9 * STALL_NS
    assert stalled["read.lat.p99"] < 0.05 * STALL_NS
    # About RATE requests were due during the stall (a third of the run); each waited for
    # the rest of it, so resp's p90 sits in the stall and p99 near its full length.
    assert stalled["read.resp.p99"] >= 0.8 * STALL_NS
    assert stalled["read.resp.p90"] >= 0.3 * STALL_NS
    assert stalled["read.lag.p99"] >= 0.7 * STALL_NS
    # The schedule is fixed in advance: the late requests are issued, not skipped.
    assert stalled["read.rate_pct"] >= 95


def test_without_the_stall_resp_stays_small(shim, tmp_path):
    calm = run_child(tmp_path, {"LD_PRELOAD": str(shim)})
    assert calm["read.resp.p99"] < 0.05 * STALL_NS
    assert calm["read.ios"] == pytest.approx(RATE * SECONDS, rel=0.05)
