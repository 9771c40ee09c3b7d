"""Fleets: the same jobs on several `fio --server` hosts at once through `fio --client`.

The servers are real fio daemons on free loopback ports, started and killed by the `fleet`
fixture. A host is "running its job" once the server has forked the job's process (server,
connection handler, backend, job: four generations), which the tests read from /proc
instead of guessing a delay.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from tests.fio.common import KiB, MiB, needs_fio, spec
from tests.fio.fleet import free_port

from iogate.errors import EngineError
from iogate.fio import backend
from iogate.fio.hosts import DEFAULT_PORT, Host, parse_hosts
from iogate.outcome import host_spread

# -- results --------------------------------------------------------------------------------

@needs_fio
def test_fleet_result_is_the_sum_of_its_hosts(fleet):
    servers = fleet(3)
    hosts = [s.host for s in servers]
    run = backend.run([spec(rw="randrw", rwmixread=50, size=1 * MiB)], hosts=hosts)
    assert set(run.hosts) == {f"127.0.0.1:{s.host.port}" for s in servers}
    assert run.result.hosts == run.hosts
    fleet_job = run.result.jobs[0]
    host_jobs = [r.jobs[0] for r in run.hosts.values()]
    for job in host_jobs:
        assert job.read.ios + job.write.ios == 256  # each host ran the whole job
    for name in ("read", "write"):
        mine = fleet_job.direction(name)
        parts = [j.direction(name) for j in host_jobs]
        assert mine.ios == sum(p.ios for p in parts)
        assert mine.bytes == sum(p.bytes for p in parts)
        assert mine.iops == pytest.approx(sum(p.iops for p in parts))
        assert mine.runtime_ns == max(p.runtime_ns for p in parts)
        for kind in ("clat", "lat"):
            merged = getattr(mine, kind)
            assert merged.count == sum(getattr(p, kind).count for p in parts) == mine.ios
            assert list(merged.histogram.counts) == [
                sum(c) for c in zip(*(getattr(p, kind).histogram.counts for p in parts),
                                    strict=True)]
            assert merged.min == min(getattr(p, kind).min for p in parts)
            assert merged.max == max(getattr(p, kind).max for p in parts)
    assert run.result.metric("total.ios") == 3 * 256
    spread = host_spread({k: r.metrics() for k, r in run.hosts.items()})["total.iops"]
    assert spread["min"] <= run.result.metric("total.iops") / 3 <= spread["max"]
    assert {spread["min_host"], spread["max_host"]} <= set(run.hosts)


@needs_fio
def test_fleet_reading_agrees_with_fio_s_own_figures(fleet, tmp_path):
    """Each host's figures are fio's for that host; the aggregate is fio's 'All clients'."""
    servers = fleet(2)
    hosts = [s.host for s in servers]
    specs = [spec(numjobs=2, size=1 * MiB), spec(rw="write", size=512 * KiB)]
    jobfile = tmp_path / "jobs.fio"
    jobfile.write_text(backend.jobfile(specs))
    out = tmp_path / "out.json"
    clients = [arg for h in hosts for arg in (f"--client={h.fio_client}", str(jobfile))]
    subprocess.run(["fio", "--output-format=json+", f"--output={out}", *clients], check=True,
                   stdout=subprocess.DEVNULL)
    raw = out.read_text()
    entries = json.loads(raw[raw.index("{"):])["client_stats"]
    run = backend.parse_output(raw, specs, hosts)
    for h in hosts:
        mine = run.hosts[h.key]
        for i, name in enumerate(("job0", "job1")):
            theirs = [e for e in entries if e["jobname"] == name and e["port"] == h.port]
            assert len(theirs) == specs[i].numjobs
            for d in ("read", "write"):
                assert mine.jobs[i].direction(d).ios == sum(e[d]["total_ios"] for e in theirs)
    everyone = next(e for e in entries if e["jobname"] == "All clients")
    for d in ("read", "write"):
        assert run.result.metric(f"{d}.ios") == everyone[d]["total_ios"]
        assert run.result.metric(f"{d}.bytes") == everyone[d]["io_bytes"]


# -- hosts that fail --------------------------------------------------------------------------

@needs_fio
def test_an_unreachable_host_is_an_error_naming_it(fleet):
    (good,) = fleet(1)
    dead = Host("127.0.0.1", free_port())  # nothing listens there
    with pytest.raises(EngineError) as caught:
        backend.run([spec()], hosts=[good.host, dead])
    message = str(caught.value)
    assert message.startswith(f"host {dead.key} did not report: ")
    assert "Connection refused" in message
    assert f"failed to connect to {dead.key}" in message
    assert good.host.key not in message


@needs_fio
def test_a_host_lost_during_the_run_is_an_error_naming_it(fleet):
    """The killed host never reports; fio finishes with the other one, yet the case must
    not pass on what remains."""
    survivor, victim = fleet(2)
    killed = []

    def kill_the_victim_once_it_runs() -> bool:
        if not killed and victim.running_a_job():
            victim.kill()
            killed.append(time.monotonic())
        return False

    job = spec(time_based=True, runtime_ns=1_500_000_000)
    with pytest.raises(EngineError) as caught:
        backend.run([job], hosts=[survivor.host, victim.host],
                    should_stop=kill_the_victim_once_it_runs, poll_interval=0.02)
    assert killed, "the victim was never seen running its job"
    message = str(caught.value)
    assert message.startswith(f"host {victim.host.key} did not report")
    assert "disconnected" in message
    assert survivor.host.key not in message


@needs_fio
def test_every_host_unreachable():
    dead = [Host("127.0.0.1", free_port()), Host("127.0.0.1", free_port())]
    with pytest.raises(EngineError) as caught:
        backend.run([spec()], hosts=dead)
    for h in dead:
        assert f"host {h.key} did not report" in str(caught.value)


# -- host lists -----------------------------------------------------------------------------

def test_host_lists():
    assert parse_hosts("h1,h2:9000,[::1]:9001,10.0.0.1") == [
        Host("h1"), Host("h2", 9000), Host("::1", 9001), Host("10.0.0.1", DEFAULT_PORT)]
    assert [h.key for h in parse_hosts("a.example:1,[::1]")] == ["a.example:1", "[::1]:8765"]
    assert [h.fio_client for h in parse_hosts("10.0.0.1:1,[::1]:2,node-3")] == [
        "ip:10.0.0.1,1", "ip6:::1,2", "node-3,8765"]


def test_host_list_files(tmp_path):
    listed = tmp_path / "hosts.txt"
    listed.write_text("# the lab\nh1\n\n  h2:9000  # rack 2\n[::1]\n")
    assert parse_hosts(f"@{listed}") == [Host("h1"), Host("h2", 9000), Host("::1")]
    listed.write_text("h1\nh1 h2\n")
    with pytest.raises(ValueError, match=rf"{listed}:2: 'h1 h2' contains spaces"):
        parse_hosts(f"@{listed}")
    listed.write_text("# nobody\n")
    with pytest.raises(ValueError, match="names no host"):
        parse_hosts(f"@{listed}")
    with pytest.raises(ValueError, match=r"cannot read the host list .*missing"):
        parse_hosts(f"@{tmp_path / 'missing'}")


@pytest.mark.parametrize(("text", "message"), [
    ("", "the host list is empty"),
    ("h1,,h2", "host 2 of the list is empty"),
    ("h1,", "host 2 of the list is empty"),
    ("h1, h2", "host 2 of the list: ' h2' contains spaces"),
    ("h1:0", "'h1:0': port '0' is not a number from 1 to 65535"),
    ("h1:65536", "port '65536' is not"),
    ("h1:http", "port 'http' is not"),
    ("h1:", "port '' is not"),
    ("::1", r"more than one ':' \(write \[::1\] for an IPv6 address\)"),
    ("[::1", "has no closing"),
    ("[nope]:1", "'nope' in brackets is not an IPv6 address"),
    ("bad_name", "'bad_name' is not a host name or IPv4 address"),
    ("1.2.3", "'1.2.3' is not a host name"),
    ("h1,h2,h1:8765", r"host 3 of the list: 'h1:8765' is h1:8765 again \(first at host 1"),
    ("[::1]:5,[0::1]:5", r"is \[::1\]:5 again"),
    ("@", "must be followed by the name of a file"),
])
def test_bad_host_lists_name_the_item(text, message):
    with pytest.raises(ValueError, match=message):
        parse_hosts(text)
