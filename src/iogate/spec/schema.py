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
    return {"$schema": DIALECT, "title": "iogate suite", **{k: v for k, v in schema.items()
                                                            if k != "title"}}
