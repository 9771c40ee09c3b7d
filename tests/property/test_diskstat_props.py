"""The engine's reading of a block device statistics line (/sys/block/DEV/stat): any
number of counters from 11 (old kernels) to 17 (and more, of which the first 17 count),
any spacing, any value of 64 bits, read back exactly; the missing ones are 0. A regular
file holding the line stands in for the sysfs file, watched by a real null-engine
session."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from iogate.diskstats import FIELDS, MIN_FIELDS
from iogate.engine import native
from iogate.engine.session import Session
from iogate.job import JobSpec

lines = st.integers(MIN_FIELDS, len(FIELDS) + 3).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, (1 << 64) - 1), min_size=n, max_size=n),
                        st.lists(st.sampled_from([" ", "  ", "\t", "        "]), min_size=n,
                                 max_size=n),
                        st.sampled_from(["\n", "", " \n"])))


@settings(max_examples=60, deadline=None)
@given(lines)
def test_every_stat_line_reads_back_exactly(line: tuple[list[int], list[str], str]) -> None:
    values, gaps, end = line
    text = "".join(gap + str(v) for gap, v in zip(gaps, values, strict=True)) + end
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stat"
        path.write_text(text)
        with Session([JobSpec(engine="null", rw="read", size=64 << 10)],
                     disks=[str(path)]) as session:
            session.start()
            while not session.wait(1.0):
                pass
            samples = native.session_disk_samples(session.handle, 0)
            result = session.collect()
    kept = min(len(values), len(FIELDS))
    want = tuple(values[:kept]) + (0,) * (len(FIELDS) - kept)
    assert len(samples) >= 2  # count start and end
    for s in samples:
        assert s.ncounters == kept
        assert tuple(s.counters) == want
    assert [x.counters for x in result.disks[0].samples] == [want] * len(samples)
    total = result.disks[0].total()
    assert total is not None
    assert set(total.counts) == {0}
