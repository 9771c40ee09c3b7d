"""The health tools' JSON read into one stable set of values, whatever the device type.

Values (each present only when the device reports it):

- ``critical_warning``: NVMe's critical warning bit field; for ATA and SCSI, 1 when the
  overall SMART status failed (``smart_status.passed`` false), else 0.
- ``temperature``: the current temperature in degrees Celsius.
- ``media_errors``: NVMe media and data integrity errors; ATA: reallocated (attribute 5)
  plus current pending (197) plus offline uncorrectable (198) sectors; SCSI: the grown
  defect list plus the uncorrected errors of the error counter log (read, write, verify).
- ``error_log_entries``: NVMe error information log entries; ATA: the SMART error log's
  count (extended log when smartctl -x read it); SCSI: not reported.
- ``percentage_used``: NVMe percentage used; ATA: the device statistics' "Percentage Used
  Endurance Indicator"; SCSI: the percentage used endurance indicator.
- ``unsafe_shutdowns``: NVMe unsafe shutdowns; ATA: attribute 174 (unexpected power loss)
  or else 192 (power-off retract count).
- ``power_on_hours``.
- ``data_units_read`` / ``data_units_written``: NVMe data units, each 1000 units of 512
  bytes (512,000 bytes) as the NVMe specification counts them; ATA (attributes 242 and 241,
  LBAs read and written, times the logical block size) and SCSI (gigabytes processed) are
  converted to the same unit.
- ``bytes_read`` / ``bytes_written``: the same in bytes.

Formats: smartctl's ``--json`` output (smartmontools 7.x: ``nvme_smart_health_information_log``,
``ata_smart_attributes.table[]``, ``scsi_error_counter_log``, ``temperature.current``,
``power_on_time.hours``, ``smart_status.passed``) and nvme-cli's ``nvme smart-log -o json``
(whose temperature is in Kelvin).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Values = dict[str, float]

# The NVMe data unit: 1000 blocks of 512 bytes (NVMe base specification, SMART / Health log).
DATA_UNIT_BYTES = 512_000
KELVIN = 273


def _number(value: object) -> float | None:
    """A JSON number, or a numeric string (smartctl writes some figures as strings)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.replace(",", ""))
        except ValueError:
            return None
    return None


def _get(doc: Mapping[str, Any], *keys: str) -> object:
    node: object = doc
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _put(values: Values, key: str, value: object) -> None:
    number = _number(value)
    if number is not None:
        values[key] = number


def _with_bytes(values: Values) -> Values:
    for direction in ("read", "written"):
        units = values.get(f"data_units_{direction}")
        if units is not None:
            values[f"bytes_{direction}"] = units * DATA_UNIT_BYTES
    return values


def _status_warning(doc: Mapping[str, Any], values: Values) -> None:
    passed = _get(doc, "smart_status", "passed")
    if isinstance(passed, bool):
        values["critical_warning"] = 0.0 if passed else 1.0


def _common(doc: Mapping[str, Any], values: Values) -> None:
    """What smartctl reports the same way for every device type, where the device type's
    own log (NVMe's) did not say it."""
    for name, where in (("temperature", ("temperature", "current")),
                        ("power_on_hours", ("power_on_time", "hours"))):
        if name not in values:
            _put(values, name, _get(doc, *where))


def _nvme_log(log: Mapping[str, Any], values: Values) -> None:
    for key, name in (("critical_warning", "critical_warning"),
                      ("percentage_used", "percentage_used"),
                      ("percent_used", "percentage_used"),
                      ("data_units_read", "data_units_read"),
                      ("data_units_written", "data_units_written"),
                      ("media_errors", "media_errors"),
                      ("num_err_log_entries", "error_log_entries"),
                      ("unsafe_shutdowns", "unsafe_shutdowns"),
                      ("power_on_hours", "power_on_hours")):
        if key in log:
            _put(values, name, log[key])


def _ata_raw(doc: Mapping[str, Any]) -> dict[int, float]:
    table = _get(doc, "ata_smart_attributes", "table")
    out: dict[int, float] = {}
    for row in table if isinstance(table, list) else []:
        if isinstance(row, Mapping) and isinstance(row.get("id"), int):
            raw = _number(_get(row, "raw", "value"))
            if raw is not None:
                out[row["id"]] = raw
    return out


def _ata_percentage_used(doc: Mapping[str, Any]) -> float | None:
    pages = _get(doc, "ata_device_statistics", "pages")
    for page in pages if isinstance(pages, list) else []:
        for entry in (page.get("table") or []) if isinstance(page, Mapping) else []:
            if isinstance(entry, Mapping) and \
                    str(entry.get("name", "")).lower().startswith("percentage used endurance"):
                return _number(entry.get("value"))
    return None


def _ata(doc: Mapping[str, Any], values: Values) -> None:
    raw = _ata_raw(doc)
    media = [raw[i] for i in (5, 197, 198) if i in raw]
    if media:
        values["media_errors"] = sum(media)
    errors = _get(doc, "ata_smart_error_log", "extended", "count")
    if errors is None:
        errors = _get(doc, "ata_smart_error_log", "summary", "count")
    _put(values, "error_log_entries", errors)
    _put(values, "unsafe_shutdowns", raw.get(174, raw.get(192)))
    if "power_on_hours" not in values:
        _put(values, "power_on_hours", raw.get(9))
    _put(values, "percentage_used", _ata_percentage_used(doc))
    block = _number(doc.get("logical_block_size")) or 512.0
    for attr, direction in ((242, "read"), (241, "written")):
        if attr in raw:
            values[f"data_units_{direction}"] = raw[attr] * block / DATA_UNIT_BYTES


def _scsi(doc: Mapping[str, Any], values: Values) -> None:
    log = doc.get("scsi_error_counter_log")
    defects = _number(doc.get("scsi_grown_defect_list"))
    uncorrected = [_number(_get(log, op, "total_uncorrected_errors"))
                   for op in ("read", "write", "verify")] if isinstance(log, Mapping) else []
    media = [v for v in (defects, *uncorrected) if v is not None]
    if media:
        values["media_errors"] = sum(media)
    _put(values, "percentage_used", doc.get("scsi_percentage_used_endurance_indicator"))
    for op, direction in (("read", "read"), ("write", "written")):
        gigabytes = _number(_get(log, op, "gigabytes_processed")) \
            if isinstance(log, Mapping) else None
        if gigabytes is not None:
            values[f"data_units_{direction}"] = gigabytes * 1e9 / DATA_UNIT_BYTES


def device_type(doc: Mapping[str, Any]) -> str | None:
    """smartctl's protocol of the device: ``NVMe``, ``ATA``, ``SCSI``; None when it found
    no device (it could not open it or detect its type)."""
    protocol = _get(doc, "device", "protocol")
    return protocol if isinstance(protocol, str) else None


def from_smartctl(doc: Mapping[str, Any]) -> Values:
    """The health values of a ``smartctl -x --json`` document; empty when it holds none."""
    values: Values = {}
    protocol = device_type(doc)
    log = doc.get("nvme_smart_health_information_log")
    if isinstance(log, Mapping):
        _nvme_log(log, values)
        if values:
            _put(values, "temperature", log.get("temperature"))  # smartctl: in Celsius
    elif protocol == "ATA" or "ata_smart_attributes" in doc:
        _status_warning(doc, values)
        _ata(doc, values)
    elif protocol == "SCSI" or "scsi_error_counter_log" in doc:
        _status_warning(doc, values)
        _scsi(doc, values)
    if values:  # temperature and hours alone are no health data
        _common(doc, values)
    return _with_bytes(values)


def from_nvme_cli(doc: Mapping[str, Any]) -> Values:
    """The health values of ``nvme smart-log -o json``; its temperature is in Kelvin."""
    values: Values = {}
    _nvme_log(doc, values)
    warning = doc.get("critical_warning")
    if isinstance(warning, Mapping):  # verbose output spells the bits out
        _put(values, "critical_warning", warning.get("value"))
    kelvin = _number(doc.get("temperature"))
    if kelvin is not None and values:
        values["temperature"] = kelvin - KELVIN
    return _with_bytes(values)


def smartctl_messages(doc: Mapping[str, Any]) -> list[str]:
    """What smartctl said (``smartctl.messages[].string``), e.g. that it could not detect
    the device type."""
    messages = _get(doc, "smartctl", "messages")
    return [str(m.get("string")) for m in messages if isinstance(m, Mapping) and
            m.get("string")] if isinstance(messages, list) else []
