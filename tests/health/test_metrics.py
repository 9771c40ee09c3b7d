"""health.* metrics: declared through the plugin hook (so validate, expectations and
``iogate metrics`` know them), computed from a before/after pair, and not measured with the
reason when a reading has no values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.expect import evaluate, parse_expectation
from iogate.hooks import NotMeasured
from iogate.metrics import Kind, describe, key_patterns, parse_metric
from iogate_health.parse import from_smartctl
from iogate_health.plugin import Reading, health_metrics, metric_paths, read_health

DATA = Path(__file__).parent / "data"


def nvme_reading(**changes: int) -> Reading:
    doc = json.loads((DATA / "smartctl-nvme.json").read_text())
    doc["nvme_smart_health_information_log"].update(changes)
    return Reading("/dev/nvme0n1", "smartctl", from_smartctl(doc), doc)


def test_deltas_from_a_before_after_pair() -> None:
    before = nvme_reading()
    after = nvme_reading(media_errors=2, data_units_written=23456789 + 1000, temperature=52,
                         num_err_log_entries=6)
    m = health_metrics(before, after)
    assert m["health.media_errors.delta"] == 2
    assert m["health.media_errors"] == 2
    assert m["health.media_errors.before"] == 0
    assert m["health.error_log_entries.delta"] == 1
    assert m["health.data_units_written.delta"] == 1000
    assert m["health.bytes_written.delta"] == 1000 * 512_000
    assert m["health.unsafe_shutdowns.delta"] == 0
    assert m["health.temperature"] == 52
    assert m["health.temperature.before"] == 38
    assert "health.temperature.delta" not in m  # it does not count up
    assert set(m) == set(metric_paths())


def test_no_reading_before_leaves_before_and_delta_unmeasured() -> None:
    m = health_metrics(None, nvme_reading())
    assert m["health.media_errors"] == 0
    assert isinstance(m["health.media_errors.delta"], NotMeasured)
    assert "not read before" in m["health.media_errors.delta"].reason


def test_a_device_without_health_data_reports_every_metric_unmeasured() -> None:
    why = "smartctl: /dev/vda: no SMART/health data (virtio disk)"
    m = health_metrics(Reading("/dev/vda", "smartctl", reason=why),
                       Reading("/dev/vda", "smartctl", reason=why))
    assert all(isinstance(v, NotMeasured) and v.reason == why for v in m.values())


def test_a_value_the_device_does_not_report() -> None:
    sas = Reading("/dev/sdb", "smartctl", {"media_errors": 1.0})
    m = health_metrics(sas, sas)
    assert m["health.media_errors.delta"] == 0
    reason = m["health.unsafe_shutdowns.delta"]
    assert isinstance(reason, NotMeasured)
    assert reason.reason == "smartctl: /dev/sdb does not report unsafe_shutdowns"


def test_declared_paths_parse_with_their_kinds() -> None:
    assert parse_metric("health.media_errors.delta").kind is Kind.COUNT
    assert parse_metric("health.percentage_used").kind is Kind.PERCENT
    assert parse_metric("health.bytes_written.delta").kind is Kind.BYTES
    assert "iogate_health plugin" in describe(parse_metric("health.temperature"))
    with pytest.raises(ValueError, match=r"'health\.temperature\.delta'.*iogate_health"):
        parse_metric("health.temperature.delta")
    with pytest.raises(ValueError, match=r"did you mean 'health\.media_errors\.delta'"):
        parse_metric("health.media_error.delta")
    assert any("health" in regex for regex, _ in key_patterns())


def test_an_unmeasured_expectation_fails_with_the_plugin_reason() -> None:
    e = parse_expectation("health.media_errors.delta", "== 0")
    check = evaluate(e, None, unmeasured="smartctl not installed")
    assert not check.passed
    assert check.reason == "not measured: smartctl not installed"
    assert evaluate(e, 0.0).passed
    assert not evaluate(e, 1.0).passed


def test_iogate_metrics_lists_the_health_metrics() -> None:
    out = subprocess.run([sys.executable, "-m", "iogate", "metrics"], capture_output=True,
                         text=True, check=True).stdout
    assert "health.{media_errors,media_errors.before,media_errors.delta}" in out
    assert "iogate_health plugin" in out


def test_a_missing_tool_is_not_installed(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    reading = read_health("/dev/vda" if Path("/dev/vda").exists() else "/",
                          search_path=str(empty))
    if reading.device is None:
        pytest.skip(f"no block device behind / here: {reading.reason}")
    assert reading.values == {}
    assert reading.reason == "smartctl not installed"


def test_a_fleet_run_does_not_read_this_machines_device(disk_dir: Path) -> None:
    # The aggregate of a fleet, then each host's own result (as per_host judging asks):
    # neither is this machine's device, whatever the target's path is here.
    from iogate.job import JobSpec
    from iogate.results import RunResult
    from iogate_health import plugin

    spec = JobSpec(size=1 << 20, filename=str(disk_dir / "data"))
    host = RunResult(specs=[spec])
    fleet = RunResult(specs=[spec], hosts={"h1:8765": host})
    for run in (fleet, host):
        m = plugin.iogate_metrics(case=None, run=run)  # type: ignore[arg-type]
        reason = m["health.media_errors.delta"]
        assert isinstance(reason, NotMeasured)
        assert "remote hosts" in reason.reason


def test_a_plugin_cannot_declare_a_core_scope_or_a_path_twice() -> None:
    from iogate import hooks
    from iogate.hooks import hookimpl
    from iogate.metrics import Family, Form, plugin_families

    class Declares:
        def __init__(self, scope: str, name: str) -> None:
            self.row = Family((scope,), (name,), Kind.COUNT, Form.PLAIN, "x", "plugin", None,
                              plugin="p")

        @hookimpl
        def iogate_metric_families(self) -> list[Family]:
            return [self.row]

    for plugins, message in (([Declares("read", "wear")], "scope 'read' is the core's"),
                             ([Declares("p", "x"), Declares("p", "x")], "declared twice")):
        pm = hooks.new_plugin_manager(load_entrypoints=False)
        for plugin in plugins:
            pm.register(plugin)
        old = hooks.set_plugin_manager(pm)
        try:
            with pytest.raises(ValueError, match=message):
                plugin_families()
        finally:
            hooks.set_plugin_manager(old)
