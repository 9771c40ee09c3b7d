"""thinktime_spin through libiogate: the start of each thinktime pause is spent busy on the
CPU, the rest asleep, and no pause is shorter than thinktime's (spinning longer than the
pause included).
Judged on the engine's own CPU time over the run, against the same job without spin: a
spinning thread uses the CPU for most of a pause, a sleeping one next to none; the bounds
are wide, as a busy machine gives the spinning thread only a share of a CPU."""

from __future__ import annotations

from iogate.engine.session import run
from iogate.job import JobSpec

MS = 1_000_000


def _run(spin_ns: int) -> tuple[int, int, int]:
    """(requests, CPU ns, wall ns) of a null job pausing 10 ms after every request."""
    result = run([JobSpec(engine="null", rw="randread", size=1 << 20, time_based=True,
                          runtime_ns=400 * MS, thinktime_ns=10 * MS,
                          plain={"thinktime_spin_ns": spin_ns} if spin_ns else {})])
    assert result.cpu is not None
    job = result.jobs[0]
    return job.read.ios, result.cpu.user_ns + result.cpu.system_ns, result.cpu.wall_ns


def test_the_start_of_each_pause_is_spent_busy_and_the_pauses_stay() -> None:
    ios_asleep, cpu_asleep, _ = _run(0)
    ios_busy, cpu_busy, wall = _run(10 * MS)  # all of each pause
    ios_capped, _, _ = _run(50 * MS)  # more than the pause: the pause, no longer
    assert cpu_busy > 10 * cpu_asleep, (cpu_busy, cpu_asleep)
    assert cpu_busy > wall // 20, (cpu_busy, wall)  # a twentieth of a CPU at the least
    # 400 ms of 10 ms pauses: about 40 requests; spinning, even for longer than the pause,
    # shortens no pause (a busy machine may lengthen them: a spinning thread waits for a
    # CPU longer than a sleeping one is woken)
    for ios in (ios_busy, ios_capped):
        assert 0 < ios <= ios_asleep + max(4, ios_asleep // 4), (ios_asleep, ios_busy,
                                                                 ios_capped)
