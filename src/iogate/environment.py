"""The environment a result was measured in: iogate's own facts plus every plugin's.

Facts about the machine and the target (kernel, CPU, memory, filesystem, device model,
firmware, ...) come from plugins through the ``iogate_environment`` hook; the first-party
``iogate_sysinfo`` plugin provides them. This module adds only what iogate knows itself.
"""

from __future__ import annotations

import platform

import pluggy

from iogate import __version__
from iogate.hooks import collect_environment


def capture(target: str | None = None,
            pm: pluggy.PluginManager | None = None) -> dict[str, object]:
    """Facts that matter when comparing results: the plugins' facts about the machine and,
    when given, about ``target`` (a file or block device path), then iogate's version and
    Python's, which no plugin can override."""
    facts = collect_environment(target, pm)
    facts["iogate_version"] = __version__
    facts["python"] = platform.python_version()
    return facts


def target_facts(facts: dict[str, object]) -> dict[str, object]:
    """Only the facts about the target (``target.*`` keys), e.g. to store per case."""
    return {k: v for k, v in facts.items() if k.startswith("target.")}
