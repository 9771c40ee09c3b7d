"""The plugin interface: specifications, entry-point loading, and how answers are merged."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import pluggy
import pytest

from iogate import environment, hooks
from iogate.hooks import hookimpl


class Facts:
    """A plugin object answering iogate_environment with fixed facts."""

    def __init__(self, facts: dict[str, object]) -> None:
        self.facts = facts
        self.targets: list[str | None] = []

    @hookimpl
    def iogate_environment(self, target: str | None) -> dict[str, object]:
        self.targets.append(target)
        return dict(self.facts)


class FirstFacts(Facts):
    @hookimpl(tryfirst=True)
    def iogate_environment(self, target: str | None) -> dict[str, object]:
        return dict(self.facts)


@pytest.fixture
def pm() -> pluggy.PluginManager:
    return hooks.new_plugin_manager(load_entrypoints=False)


def test_every_hook_is_specified(pm: pluggy.PluginManager) -> None:
    names = {name for name in dir(pm.hook) if name.startswith("iogate_")}
    assert names == {"iogate_environment", "iogate_case_start", "iogate_case_end",
                     "iogate_metrics", "iogate_report", "iogate_add_options",
                     "iogate_configure", "iogate_backends", "iogate_metric_families",
                     "iogate_trend_figure"}


def test_an_implementation_with_a_wrong_argument_is_refused(pm: pluggy.PluginManager) -> None:
    class Wrong:
        @hookimpl
        def iogate_environment(self, path: str) -> dict[str, object]:
            return {}

    with pytest.raises(pluggy.PluginValidationError):
        pm.register(Wrong())


def test_the_target_reaches_the_plugin(pm: pluggy.PluginManager) -> None:
    plugin = Facts({"kernel": "6.1"})
    pm.register(plugin)
    assert hooks.collect_environment("/dev/nvme0n1", pm) == {"kernel": "6.1"}
    assert plugin.targets == ["/dev/nvme0n1"]


def test_merge_keeps_every_key_and_the_later_plugin_wins(pm: pluggy.PluginManager) -> None:
    pm.register(Facts({"kernel": "old", "cpu_count": 4}), name="first")
    pm.register(Facts({"kernel": "new", "target.fs": "xfs"}), name="second")
    assert hooks.collect_environment(None, pm) == {"kernel": "new", "cpu_count": 4,
                                                   "target.fs": "xfs"}


def test_tryfirst_wins_over_registration_order(pm: pluggy.PluginManager) -> None:
    pm.register(FirstFacts({"kernel": "preferred"}), name="first")
    pm.register(Facts({"kernel": "later"}), name="second")
    assert hooks.collect_environment(None, pm)["kernel"] == "preferred"


def test_none_answers_are_skipped(pm: pluggy.PluginManager) -> None:
    class Silent:
        @hookimpl
        def iogate_environment(self, target: str | None) -> None:
            return None

    pm.register(Facts({"host": "h"}))
    pm.register(Silent())
    assert hooks.collect_environment(None, pm) == {"host": "h"}


def test_capture_adds_iogate_facts_that_plugins_cannot_override(
        pm: pluggy.PluginManager) -> None:
    pm.register(Facts({"iogate_version": "forged", "kernel": "6.1"}))
    facts = environment.capture("/var/tmp/x", pm=pm)
    assert facts["kernel"] == "6.1"
    assert facts["iogate_version"] != "forged"
    assert "python" in facts
    assert environment.target_facts({"kernel": "k", "target.fs": "ext4"}) == {
        "target.fs": "ext4"}


def test_plugin_metrics_never_replace_core_metrics(pm: pluggy.PluginManager) -> None:
    class Extra:
        @hookimpl
        def iogate_metrics(self, case: object, run: object) -> dict[str, float]:
            return {"read.iops": 1.0, "extra.wear_pct": 3}

    pm.register(Extra())
    out = hooks.collect_metrics(object(), object(), {"read.iops": 5000.0}, pm)  # type: ignore[arg-type]
    assert out == {"extra.wear_pct": 3.0}


def test_options_are_declared_and_configured(pm: pluggy.PluginManager) -> None:
    seen: list[Mapping[str, str | None]] = []

    class WithOptions:
        @hookimpl
        def iogate_add_options(self, add: hooks.AddOption) -> None:
            add("push-url", help="where to push metrics")
            add("push-job", help="job label", default="iogate")

        @hookimpl
        def iogate_configure(self, options: Mapping[str, str | None]) -> None:
            seen.append(options)

    pm.register(WithOptions())
    options = hooks.collect_options(pm)
    assert [(o.cli_flag, o.pytest_flag, o.dest, o.default) for o in options] == [
        ("--push-url", "--iogate-push-url", "iogate_plugin_push_url", None),
        ("--push-job", "--iogate-push-job", "iogate_plugin_push_job", "iogate"),
    ]
    hooks.configure(lambda o: "http://x" if o.name == "push-url" else o.default, pm)
    assert seen == [{"push-url": "http://x", "push-job": "iogate"}]


@pytest.mark.parametrize("name", ["", "Push", "push_url", "push--url", "-push"])
def test_bad_option_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="lower-case words"):
        hooks.AddOption()(name, help="h")


def test_an_option_declared_twice_is_refused() -> None:
    add = hooks.AddOption()
    add("x", help="h")
    with pytest.raises(ValueError, match="twice"):
        add("x", help="h")


@pytest.fixture
def installed_plugin(tmp_path: Path) -> Iterator[str]:
    """A distribution on sys.path whose ``iogate`` entry point names a plugin module."""
    module = "iogate_test_fake_plugin"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent("""
        from iogate.hooks import hookimpl

        @hookimpl
        def iogate_environment(target):
            return {"fake.loaded": True}
    """))
    info = tmp_path / "iogate_test_fake-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: iogate-test-fake\n"
                                   "Version: 1.0\n")
    (info / "entry_points.txt").write_text(f"[iogate]\nfake = {module}\n")
    sys.path.insert(0, str(tmp_path))
    try:
        yield "fake"
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(module, None)


def test_plugins_are_loaded_from_the_entry_point_group(installed_plugin: str) -> None:
    pm = hooks.new_plugin_manager(disabled=[])
    assert pm.get_plugin(installed_plugin) is not None
    assert hooks.collect_environment(None, pm)["fake.loaded"] is True


def test_a_disabled_plugin_is_not_loaded(installed_plugin: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(hooks.DISABLE_ENV, f"other, {installed_plugin}")
    pm = hooks.new_plugin_manager()
    assert pm.get_plugin(installed_plugin) is None
    assert "fake.loaded" not in hooks.collect_environment(None, pm)


def test_the_process_wide_manager_is_cached_and_replaceable(
        pm: pluggy.PluginManager) -> None:
    old = hooks.set_plugin_manager(pm)
    try:
        assert hooks.get_plugin_manager() is pm
        pm.register(Facts({"kernel": "from-global"}))
        assert environment.capture()["kernel"] == "from-global"
        hooks.set_plugin_manager(None)
        fresh = hooks.get_plugin_manager()
        assert fresh is not pm
        assert hooks.get_plugin_manager() is fresh
    finally:
        hooks.set_plugin_manager(old)


# -- backends ----------------------------------------------------------------------------------

def test_the_core_backends_register_like_any_plugin(pm: pluggy.PluginManager) -> None:
    from iogate import backends
    from iogate.engine import isolated

    known = backends.available(pm)
    assert sorted(known) == ["fio", "native"]
    assert known["fio"].fleets
    assert not known["native"].fleets
    assert backends.engine_for(pm, "native") is isolated.run


def test_a_plugin_adds_a_backend_and_a_name_is_declared_once(pm: pluggy.PluginManager) -> None:
    from iogate import backends
    from iogate.results import RunResult

    def engine(specs: list[object], **_: object) -> RunResult:
        raise AssertionError("not run here")

    class Replay:
        @hookimpl
        def iogate_backends(self) -> list[backends.Backend]:
            return [backends.Backend("replay", "replays recorded results", lambda hosts: engine)]

    pm.register(Replay())
    assert backends.engine_for(pm, "replay") is engine
    with pytest.raises(backends.BackendError, match="unknown backend 'nope': use fio or "
                       "native or replay"):
        backends.engine_for(pm, "nope")
    with pytest.raises(backends.BackendError, match="runs on this machine only"):
        backends.engine_for(pm, "replay", hosts=["h"])  # type: ignore[list-item]

    class Again:
        @hookimpl
        def iogate_backends(self) -> list[backends.Backend]:
            return [backends.Backend("native", "another native", lambda hosts: engine)]

    pm.register(Again())
    with pytest.raises(backends.BackendError, match="'native' is declared twice"):
        backends.available(pm)
