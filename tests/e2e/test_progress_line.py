"""`iogate run` on a terminal draws its progress line with the case's position in the suite,
and in a log (not a terminal) each finished case's line ends with that position."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

IOGATE = [sys.executable, "-m", "iogate"]

SUITE = """\
suite: line
defaults:
  ioengine: null
  size: 1MiB
  runtime: 300ms
  time_based: true
workloads:
  - name: first
    rw: randread
    repeat: 2
  - name: second
    rw: read
    bs: 1MiB
"""


def test_frames_on_a_terminal_show_the_position_and_the_unit(tmp_path: Path) -> None:
    (tmp_path / "line.suite.yaml").write_text(SUITE)
    controller, terminal = pty.openpty()
    proc = subprocess.Popen([*IOGATE, "run", "line.suite.yaml"], cwd=tmp_path,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=terminal, env={**os.environ, "COLUMNS": "200"})
    os.close(terminal)
    out = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the other end closed: the run is over
            break
        if not chunk:
            break
        out += chunk
    os.close(controller)
    assert proc.wait(timeout=120) == 0
    frames = [f.replace("\x1b[K", "") for f in out.decode().replace("\n", "\r").split("\r")]
    drawn = [f for f in frames if " ETA " in f]
    first = [f for f in drawn if f.startswith("[1/2] line.suite.yaml::first ")]
    second = [f for f in drawn if f.startswith("[2/2] line.suite.yaml::second ")]
    assert first, frames
    assert second, frames
    assert drawn.index(first[-1]) < drawn.index(second[0])
    assert all("IOPS" in f for f in first)
    assert all("/s" in f for f in second)
    assert any("repeat 2/2" in f for f in first)


def test_finished_cases_in_a_log_end_with_their_position(tmp_path: Path) -> None:
    (tmp_path / "line.suite.yaml").write_text(SUITE)
    proc = subprocess.run([*IOGATE, "run", "line.suite.yaml"], cwd=tmp_path, text=True,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert "line.suite.yaml::first: passed [1/2]" in lines
    assert "line.suite.yaml::second: passed [2/2]" in lines
    assert "\r" not in proc.stderr  # no progress line off a terminal
