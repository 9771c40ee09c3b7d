"""The plugin interface: pluggy hook specifications and the process-wide plugin manager.

A plugin is a module (or object) with functions named like the specifications below and
marked with :data:`hookimpl`. It is found through the ``iogate`` entry-point group::

    [project.entry-points.iogate]
    myplugin = "my_package.plugin"

The core never imports a plugin: it loads whatever that group lists, first-party plugins
included. ``IOGATE_DISABLE_PLUGINS=name1,name2`` skips entry points by name. The core's own
backends (:data:`CORE_PLUGINS`) are registered the same way, by module name, in every
manager.

The functions here also fix how the answers of several plugins combine (environment facts,
metrics, options), so every front end merges them the same way. The process-wide manager hands
the metric rows its plugins declare to :mod:`iogate.metrics` as it is made or replaced, so that
expectations may name them.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pluggy

from iogate.metrics import Family, use_plugin_families

if TYPE_CHECKING:  # only for annotations: the specifications never run core code
    from iogate.backends import Backend
    from iogate.outcome import CaseResult
    from iogate.results import RunResult
    from iogate.spec import Case
    from iogate.trend import Trend

PROJECT = "iogate"
ENTRY_POINT_GROUP = "iogate"
DISABLE_ENV = "IOGATE_DISABLE_PLUGINS"
# Modules of the core that implement hooks: the backends that run job specs.
CORE_PLUGINS = ("iogate.engine.isolated", "iogate.fio.backend")

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# -- specifications ----------------------------------------------------------------------------

@hookspec
def iogate_environment(target: str | None) -> dict[str, object] | None:
    """Facts about the machine and, when ``target`` is given, about the file or block device
    a case runs against.

    Return a flat mapping with namespaced keys (``kernel``, ``cpu_model``, ``target.fs``,
    ``target.firmware``, ...) whose values are JSON scalars, or None. Facts are best effort:
    leave out what the system does not expose rather than reporting None, and never raise
    for a missing file. ``target`` may not exist yet (a temporary file is created when the
    case starts): describe where it will be. Every plugin's answer is merged; see
    :func:`collect_environment` for which one wins a key.
    """


@hookspec
def iogate_case_start(case: Case) -> None:
    """Called before a case runs (before its precondition steps)."""


@hookspec
def iogate_case_end(case: Case, result: CaseResult) -> None:
    """Called when a case has its outcome, whatever it is (passed, failed, error,
    interrupted). ``result.metrics`` already holds the metrics of every plugin."""


@hookspec
def iogate_metrics(case: Case, run: RunResult) -> dict[str, float | NotMeasured] | None:
    """Extra metrics computed from a finished run, merged into the case's ``metrics``.

    Keys should be namespaced by the plugin (``myplugin.wear_pct``); a key the core already
    reports is ignored rather than overwritten, so a plugin can never change a verdict's
    input. A value may be :class:`NotMeasured` with the reason: the metric is left out and
    an expectation on it fails as not measured, giving that reason. Not called for a case
    that did not run. Expectations may name a plugin's metric once it is declared through
    :func:`iogate_metric_families`.
    """


@hookspec
def iogate_metric_families() -> list[Family] | None:
    """The metrics a plugin measures (through :func:`iogate_metrics`), declared so that
    expectations may name them, ``validate`` accepts them and ``iogate metrics`` lists them.

    Each is a :class:`iogate.metrics.Family` with ``form=Form.PLAIN``, ``compute="plugin"``,
    ``plugin`` set to the plugin's name, one scope of the plugin's own (not a core scope:
    ``read``, ``total``, ``sync``...) and names that complete the exact paths, dots allowed
    (``scopes=("health",), names=("media_errors", "media_errors.delta")``). A path
    declared twice is an error.
    """


@hookspec
def iogate_report(results: Sequence[CaseResult], document: dict[str, Any]) -> None:
    """Called once after a run with every case result and the results document (the JSON
    written by ``--json``), before it is written. A plugin may write its own artifacts or
    add top-level keys to ``document``; it should not change the core's keys."""


@hookspec(firstresult=True)
def iogate_trend_figure(trend: Trend, forms: Sequence[str]) -> dict[str, bytes] | None:
    """Draw the trend of one metric of a history store, as ``iogate history DEST --metric M``
    asks with ``--png FILE`` and ``--html FILE``.

    ``trend`` (:class:`iogate.trend.Trend`) holds the series' case, device and metric, its
    runs oldest first (value, repeat samples, build, outcome), its change points and the
    level between them. ``forms`` names the files wanted, among ``"png"`` (the plot as a
    PNG image) and ``"html"`` (a self-contained page: the plot, the change points, every
    run). Return every form asked for, keyed by it, as the file's bytes; or None to leave
    the trend to another plugin (the first answer that is not None is taken). Raise
    :class:`iogate.trend.FigureError` with the reason when a form cannot be made (what draws
    it is not installed). The plots plugin (iogate_plots) implements it; with no plugin that
    answers, the command says that the plots plugin is needed. Called only for those
    options: the text output of ``iogate history`` draws nothing.
    """


@hookspec
def iogate_backends() -> list[Backend] | None:
    """Backends that run job specs (:class:`iogate.backends.Backend`): each has a name that
    ``--backend NAME`` (pytest ``--iogate-backend NAME``) chooses and makes the engine that
    runs a case's job specs. Every plugin's list is merged; a name declared twice is an
    error."""


@hookspec
def iogate_add_options(add: AddOption) -> None:
    """Declare command-line options. Call ``add(name, help=..., default=..., metavar=...)``
    once per option; ``iogate run`` offers it as ``--NAME`` and pytest as ``--iogate-NAME``. Values
    reach the plugin through :func:`iogate_configure`. Names are lower-case words joined by
    ``-`` and should start with the plugin's name."""


@hookspec
def iogate_configure(options: Mapping[str, str | None]) -> None:
    """Called once before any case runs, with the value of every option declared through
    :func:`iogate_add_options` (keyed by option name; None when not given and no default)."""


@dataclass(frozen=True)
class NotMeasured:
    """A plugin metric that could not be measured, and why (``smartctl not installed``)."""

    reason: str


# -- options -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PluginOption:
    """A command-line option a plugin asked for; front ends spell it their own way."""

    name: str
    help: str
    default: str | None = None
    metavar: str = "VALUE"  # what the help shows for the value

    @property
    def cli_flag(self) -> str:
        return f"--{self.name}"

    @property
    def pytest_flag(self) -> str:
        return f"--iogate-{self.name}"

    @property
    def dest(self) -> str:
        """The attribute name argparse and pytest store the value under."""
        return "iogate_plugin_" + self.name.replace("-", "_")


class AddOption:
    """The callback handed to ``iogate_add_options``; collects what plugins declare."""

    def __init__(self) -> None:
        self.options: list[PluginOption] = []

    def __call__(self, name: str, *, help: str, default: str | None = None,
                 metavar: str = "VALUE") -> None:
        if not name or not all(part.isalnum() and part.islower() for part in name.split("-")):
            raise ValueError(f"plugin option name {name!r}: use lower-case words joined by '-'")
        if any(o.name == name for o in self.options):
            raise ValueError(f"plugin option --{name} is declared twice")
        self.options.append(PluginOption(name, help, default, metavar))


# -- the plugin manager ------------------------------------------------------------------------

_manager: pluggy.PluginManager | None = None


def new_plugin_manager(*, load_entrypoints: bool = True,
                       disabled: Iterable[str] | None = None) -> pluggy.PluginManager:
    """A fresh manager with the specifications registered and, unless told otherwise, every
    plugin of the ``iogate`` entry-point group loaded except the ``disabled`` names (default:
    the comma-separated ``IOGATE_DISABLE_PLUGINS``). Tests use ``load_entrypoints=False`` and
    register the plugins they want (the core's backends are always there)."""
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(sys.modules[__name__])
    for name in CORE_PLUGINS:
        pm.register(importlib.import_module(name), name)
    if load_entrypoints:
        if disabled is None:
            disabled = os.environ.get(DISABLE_ENV, "").split(",")
        for name in disabled:
            if name.strip():
                pm.set_blocked(name.strip())
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    return pm


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide manager with the entry-point plugins, created on first use (which
    makes their metric rows known to :mod:`iogate.metrics`)."""
    global _manager
    if _manager is None:
        pm = new_plugin_manager()
        use_plugin_families(collect_metric_families(pm))
        _manager = pm
    return _manager


def set_plugin_manager(pm: pluggy.PluginManager | None) -> pluggy.PluginManager | None:
    """Replace the process-wide manager (None: build it again on next use); returns the old
    one so a test can put it back. The metric rows known are the new manager's (None: the
    core's alone until the next is built)."""
    global _manager
    old, _manager = _manager, pm
    use_plugin_families(collect_metric_families(pm) if pm is not None else ())
    return old


# -- combining answers -------------------------------------------------------------------------

def _merge_first_wins(answers: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    # pluggy calls the most recently registered (or tryfirst) implementation first and lists
    # its answer first; that plugin has the last word on a key, as with firstresult hooks.
    merged: dict[str, Any] = {}
    for answer in reversed(list(answers)):
        if answer:
            merged.update(answer)
    return merged


def collect_environment(target: str | None = None,
                        pm: pluggy.PluginManager | None = None) -> dict[str, object]:
    """Every plugin's environment facts, merged. When two plugins report the same key, the
    one pluggy calls first wins (registered later, or marked ``tryfirst``)."""
    pm = pm or get_plugin_manager()
    return _merge_first_wins(pm.hook.iogate_environment(target=target))


def collect_metrics(case: Case, run: RunResult, core: Mapping[str, float],
                    pm: pluggy.PluginManager | None = None) -> dict[str, float]:
    """The plugins' extra metrics for a run, without the keys the core already has."""
    return collect_plugin_metrics(case, run, core, pm)[0]


def collect_plugin_metrics(case: Case, run: RunResult, core: Mapping[str, float],
                           pm: pluggy.PluginManager | None = None
                           ) -> tuple[dict[str, float], dict[str, str]]:
    """The plugins' extra metrics for a run, without the keys the core already has, and
    the reason each metric a plugin reported :class:`NotMeasured` is missing."""
    pm = pm or get_plugin_manager()
    extra = _merge_first_wins(pm.hook.iogate_metrics(case=case, run=run))
    values = {k: float(v) for k, v in extra.items()
              if k not in core and not isinstance(v, NotMeasured)}
    reasons = {k: v.reason for k, v in extra.items()
               if k not in core and isinstance(v, NotMeasured)}
    return values, reasons


def collect_metric_families(pm: pluggy.PluginManager | None = None) -> list[Family]:
    """The metric rows every plugin declares, in registration order, as they are;
    :func:`iogate.metrics.plugin_families` checks them once they are handed over."""
    pm = pm or get_plugin_manager()
    return [family for answer in reversed(pm.hook.iogate_metric_families())
            for family in answer or ()]


def collect_options(pm: pluggy.PluginManager | None = None) -> list[PluginOption]:
    """The options every plugin declares, in call order."""
    pm = pm or get_plugin_manager()
    add = AddOption()
    pm.hook.iogate_add_options(add=add)
    return add.options


def configure(values: Callable[[PluginOption], str | None],
              pm: pluggy.PluginManager | None = None) -> None:
    """Read each declared option's value with ``values`` and hand them all to the plugins."""
    pm = pm or get_plugin_manager()
    options = {o.name: values(o) for o in collect_options(pm)}
    pm.hook.iogate_configure(options=options)
