#!/usr/bin/env python3
"""Benchmark: how long refusing each malformed suite takes.

Loads every suite of the malformed corpus (``tests/unit/test_malformed.py``: alias bombs,
deep nesting, huge literals, bad encodings, ...) in this process, each --rounds times, and
prints the median CPU seconds of each load and the slowest. The tests check that each one is
refused with its message and within a memory bound; how long it takes is measured here,
since a busy machine makes any time bound in a test fail for no reason. A load that takes
more than a second of CPU is worth a look. This reports; it never gates.

  .venv/bin/python bench/malformed_load.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests" / "unit"))
    import test_malformed as corpus  # the corpus the tests refuse

    from iogate.errors import SuiteError
    from iogate.spec import load_suite

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for param in corpus.CORPUS:
            bad = param.values[0]
            path = corpus.write(Path(tmp), bad.text)
            times = []
            for _ in range(args.rounds):
                start = time.process_time()
                with contextlib.suppress(SuiteError):
                    load_suite(path, env=bad.env)
                times.append(time.process_time() - start)
            rows.append((statistics.median(times), str(param.id)))
    rows.sort(reverse=True)
    print(f"{'CPU s (median)':>14}  suite")
    for seconds, name in rows:
        print(f"{seconds:14.4f}  {name}")
    print(f"\n{len(rows)} malformed suites, slowest {rows[0][0]:.3f} s of CPU ({rows[0][1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
