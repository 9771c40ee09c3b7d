"""The environment a result was measured in: iogate's own facts plus every plugin's, and
the facts a run was told instead of reading them.

Facts about the machine and the target (kernel, CPU, memory, filesystem, device model,
firmware, ...) come from plugins through the ``iogate_environment`` hook; the first-party
``iogate_sysinfo`` plugin provides them. This module adds only what iogate knows itself.

Where sysfs cannot tell (a loop device, a drive behind an HBA or a USB bridge, firmware
flashed without a rescan), the run is told: ``--fact KEY=VALUE`` (pytest ``--iogate-fact``)
or the environment variable ``IOGATE_FACT_<KEY>`` gives one of :data:`GIVEN_KEYS`
(:func:`given_facts`). The run's settings carry them (``RunSettings.facts``) to every
:func:`capture` of the run, which applies them over what the plugins read: the baseline
entry chosen, the baseline and the history store recorded, and the results document and
reports all see the given value.
"""

from __future__ import annotations

import difflib
import os
import platform
from collections.abc import Iterable, Mapping

import pluggy

from iogate import __version__
from iogate.hooks import collect_environment

# The facts a run may be given: those that key a baseline entry (iogate.baseline
# .ENVIRONMENT_KEYS) but iogate_version, which is iogate's own.
GIVEN_KEYS = ("device_model", "firmware", "host", "kernel")
# Given facts that are the target's: recorded under ``target.<key>`` as well, where a
# case's environment keeps them.
TARGET_KEYS = ("device_model", "firmware")
ENV_PREFIX = "IOGATE_FACT_"

def capture(target: str | None = None, pm: pluggy.PluginManager | None = None,
            given: Mapping[str, str] | None = None) -> dict[str, object]:
    """Facts that matter when comparing results: the plugins' facts about the machine and,
    when given, about ``target`` (a file or block device path); over them the facts the run
    was ``given`` (of :data:`GIVEN_KEYS`: :func:`given_facts`), a target's also under
    ``target.<key>`` when there is a target, and their keys listed under ``given``; then
    iogate's version and Python's, which nothing can override."""
    facts = collect_environment(target, pm)
    given = given or {}
    unknown = [k for k in given if k not in GIVEN_KEYS]
    if unknown:
        raise ValueError(f"facts that cannot be given: {', '.join(unknown)}")
    if given:
        facts["given"] = [k for k in GIVEN_KEYS if k in given]
    for key, value in given.items():
        facts[key] = value
        if key in TARGET_KEYS and target is not None:
            facts[f"target.{key}"] = value
    facts["iogate_version"] = __version__
    facts["python"] = platform.python_version()
    return facts


def target_facts(facts: dict[str, object]) -> dict[str, object]:
    """Only the facts about the target (``target.*`` keys), e.g. to store per case."""
    return {k: v for k, v in facts.items() if k.startswith("target.")}


def given_facts(texts: Iterable[str] | None, environ: Mapping[str, str] | None = None,
                option: str = "--fact") -> dict[str, str]:
    """The facts a run is given: ``IOGATE_FACT_<KEY>=VALUE`` variables of ``environ``
    (default: the process's; one set to an empty value counts as unset, as CI templates
    leave them), then ``KEY=VALUE`` texts of ``option``, which win. Raises ValueError naming
    the text or the variable: not KEY=VALUE, an empty value, a key that cannot be given
    (with the keys that can, and the closest), one key given two values."""
    environ = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX):
            continue
        value = environ[name].strip()
        if value:
            out[_known(name[len(ENV_PREFIX):].lower(), f"the environment variable {name}")] \
                = value
    said: dict[str, str] = {}
    for text in texts or ():
        key, equals, value = text.partition("=")
        key, value = key.strip(), value.strip()
        where = f"{option} {text}"
        if not equals or not key:
            raise ValueError(f"{where}: not KEY=VALUE, e.g. firmware=FW2")
        key = _known(key, where)
        if not value:
            raise ValueError(f"{where}: no value; give {key}=VALUE")
        if said.get(key, value) != value:
            raise ValueError(f"{where}: {key} is given twice, as '{said[key]}' and "
                             f"'{value}'; a run has one {key}")
        said[key] = value
    out.update(said)
    return {k: out[k] for k in GIVEN_KEYS if k in out}


def _known(key: str, where: str) -> str:
    """``key`` if a fact of that name can be given; else ValueError naming ``where``."""
    if key in GIVEN_KEYS:
        return key
    if key == "iogate_version":
        raise ValueError(f"{where}: iogate_version is iogate's own fact and cannot be given; "
                         f"facts that can be given: {', '.join(GIVEN_KEYS)}")
    close = (difflib.get_close_matches(key, GIVEN_KEYS, n=1, cutoff=0.6)
             or [k for k in GIVEN_KEYS if len(key) >= 4 and (key in k or k in key)])
    hint = f"; did you mean '{close[0]}'?" if close else ""
    raise ValueError(f"{where}: unknown fact '{key}': facts that can be given are "
                     f"{', '.join(GIVEN_KEYS)}{hint}")
