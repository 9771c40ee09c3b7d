"""The JSON Schema of a suite file, for editors and CI linters (``iogate schema``).

Generated from the models, so it cannot drift from what :func:`iogate.spec.load_suite`
accepts. The schema is looser in one way: cross-field rules (psync needs iodepth 1...)
and expectation syntax are only checked by iogate itself.
"""

from __future__ import annotations

from typing import Any

from iogate.spec.models import SuiteFile

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def json_schema() -> dict[str, Any]:
    schema = SuiteFile.model_json_schema(mode="validation")
    _share_expectation_keys(schema)
    return {"$schema": DIALECT, "title": "iogate suite", **{k: v for k, v in schema.items()
                                                            if k != "title"}}


def _share_expectation_keys(schema: dict[str, Any]) -> None:
    """The keys of ``expect`` and ``per_host`` (every metric, from iogate.metrics) are
    written once, under ``$defs/Expectations``, and referred to where they are used."""
    shared: dict[str, Any] | None = None
    for model in schema.get("$defs", {}).values():
        for key in ("expect", "per_host"):
            field = model.get("properties", {}).get(key)
            if not field or "patternProperties" not in field:
                continue
            keys = {k: field.pop(k) for k in ("properties", "patternProperties",
                                              "additionalProperties")}
            shared = shared or keys
            field["$ref"] = "#/$defs/Expectations"
    if shared is not None:
        schema["$defs"]["Expectations"] = {"type": "object", **shared}
