"""The health tools' JSON read into the stable values: smartctl for NVMe, SATA and SAS, and
nvme-cli's smart-log (fixtures in data/, formats described in data/README.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from iogate_health.parse import DATA_UNIT_BYTES, from_nvme_cli, from_smartctl

DATA = Path(__file__).parent / "data"


def load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / name).read_text())
    return doc


NVME = {"critical_warning": 0, "temperature": 38, "percentage_used": 3,
        "data_units_read": 12345678, "data_units_written": 23456789, "media_errors": 0,
        "error_log_entries": 5, "unsafe_shutdowns": 21, "power_on_hours": 7890,
        "bytes_read": 12345678 * 512_000, "bytes_written": 23456789 * 512_000}


def test_smartctl_nvme() -> None:
    assert from_smartctl(load("smartctl-nvme.json")) == NVME


def test_nvme_cli_smart_log_reads_kelvin_as_celsius() -> None:
    # The same device through nvme-cli: temperature 311 K is 38 degrees Celsius.
    assert from_nvme_cli(load("nvme-smart-log.json")) == NVME


def test_nvme_cli_newer_key_name() -> None:
    doc = load("nvme-smart-log.json")
    doc["percentage_used"] = doc.pop("percent_used")
    assert from_nvme_cli(doc)["percentage_used"] == 3


def test_smartctl_sata_maps_the_nearest_attributes() -> None:
    values = from_smartctl(load("smartctl-sata.json"))
    assert values == {
        "critical_warning": 0,  # smart_status.passed
        "temperature": 31,  # temperature.current, not attribute 194's packed raw value
        "media_errors": 2 + 1 + 0,  # reallocated (5) + pending (197) + uncorrectable (198)
        "error_log_entries": 3,  # ata_smart_error_log.extended.count
        "unsafe_shutdowns": 7,  # 174 wins over 192
        "power_on_hours": 5000,
        "percentage_used": 4,  # device statistics: Percentage Used Endurance Indicator
        "data_units_read": 2_000_000_000 * 512 / DATA_UNIT_BYTES,  # 242 LBAs x 512 bytes
        "data_units_written": 1_000_000_000 * 512 / DATA_UNIT_BYTES,  # 241
        "bytes_read": 2_000_000_000 * 512, "bytes_written": 1_000_000_000 * 512,
    }


def test_smartctl_sata_without_174_counts_power_off_retracts() -> None:
    doc = load("smartctl-sata.json")
    table = doc["ata_smart_attributes"]["table"]
    doc["ata_smart_attributes"]["table"] = [a for a in table if a["id"] != 174]
    assert from_smartctl(doc)["unsafe_shutdowns"] == 99


def test_smartctl_sas_grown_defects_and_error_counter_log() -> None:
    values = from_smartctl(load("smartctl-sas.json"))
    assert values["media_errors"] == 4 + 1 + 0 + 2  # grown defects + uncorrected r/w/v
    assert values["temperature"] == 41
    assert values["power_on_hours"] == 64579
    assert values["percentage_used"] == 2
    assert values["critical_warning"] == 0
    assert values["bytes_read"] == pytest.approx(3237.519e9)
    assert values["data_units_written"] == pytest.approx(1086.347e9 / DATA_UNIT_BYTES)
    assert "error_log_entries" not in values
    assert "unsafe_shutdowns" not in values


@pytest.mark.parametrize("name", ["smartctl-sata.json", "smartctl-sas.json"])
def test_failed_smart_status_is_a_critical_warning(name: str) -> None:
    doc = load(name)
    doc["smart_status"]["passed"] = False
    assert from_smartctl(doc)["critical_warning"] == 1


def test_a_device_smartctl_cannot_read_has_no_values() -> None:
    # What smartctl 7.3 prints for a virtio disk on this kind of machine.
    doc = {"json_format_version": [1, 0],
           "smartctl": {"version": [7, 3], "exit_status": 1,
                        "messages": [{"string": "/dev/vda: Unable to detect device type",
                                      "severity": "error"}]}}
    assert from_smartctl(doc) == {}
    assert from_nvme_cli({}) == {}
