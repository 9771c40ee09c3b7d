"""The suite language: YAML suite files in, validated test cases out.

The package's face: what other packages use, re-exported. Loading and expansion into cases
are :mod:`iogate.spec.suite`'s; the YAML reader with its marks, :mod:`~iogate.spec.loader`;
variables, :mod:`~iogate.spec.variables`; sweeps, :mod:`~iogate.spec.sweep`; the rw modes,
:mod:`~iogate.spec.modes`; field types, :mod:`~iogate.spec.fields` and its families
(blocks, priorities, rates, data, distributions); the table of job keys,
:mod:`~iogate.spec.keys`; rules between keys, :mod:`~iogate.spec.rules`; the models,
:mod:`~iogate.spec.models`; their errors in plain
words, :mod:`~iogate.spec.translate`; the JSON schema, :mod:`~iogate.spec.schema`.

Importing the package (which any of its modules' import does first) builds every model,
with SIGINT and SIGTERM held until they are built.
"""

from __future__ import annotations

from iogate import interrupts

# pydantic builds the models as their modules are imported, and an interrupt in the middle
# would come out of it as another error (a SchemaError, with a traceback): they are
# imported here, with SIGINT and SIGTERM held, whichever of the package's modules is
# imported first (the package comes before any of them), an interrupt then coming after.
with interrupts.deferred():
    from iogate.spec.models import PreconditionStep, SteadyState, Workload
    from iogate.spec.suite import (
        MAX_WORKLOADS,
        Case,
        LoadedSuite,
        load_suite,
        load_suite_text,
        validate_paths,
    )
    from iogate.spec.sweep import SweepPoint

__all__ = [
    "MAX_WORKLOADS",
    "Case",
    "LoadedSuite",
    "PreconditionStep",
    "SteadyState",
    "SweepPoint",
    "Workload",
    "load_suite",
    "load_suite_text",
    "validate_paths",
]
