"""The bytes a run will move, for its progress: size per thread, or io_size where the job
stops there, times the threads; unknown when a run ends by time, by a count of requests or
at the target's own size."""

from __future__ import annotations

import pytest

from iogate.plan import expected_bytes
from iogate.spec import load_suite_text

MiB = 1 << 20


def cases(extra: str):
    text = ("suite: p\nworkloads:\n  - name: w\n    ioengine: null\n    rw: read\n"
            "    size: 4MiB\n    numjobs: 2\n" + extra)
    return load_suite_text(text, "p.suite.yaml", {}).cases


@pytest.mark.parametrize(("extra", "expected"), [
    ("", 2 * 4 * MiB),
    ("    io_size: 12MiB\n", 2 * 12 * MiB),  # over the region three times
    ("    io_size: 1MiB\n", 2 * 1 * MiB),
    ("    number_ios: 10\n", None),
    ("    time_based: true\n    runtime: 1s\n", None),
])
def test_progress_expects_what_each_thread_moves(extra: str, expected: int | None) -> None:
    assert expected_bytes(cases(extra)) == expected
