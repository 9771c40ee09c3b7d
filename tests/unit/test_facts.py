"""Environment facts given to a run (--fact KEY=VALUE, IOGATE_FACT_<KEY>): how they are read
and refused, how capture applies them over what the plugins read, and how the results
document, the Markdown summary and a baseline built from the results carry them."""

from __future__ import annotations

import re
from typing import Any

import pluggy
import pytest

from iogate import environment, hooks, markdown, report
from iogate.baseline import Baseline
from iogate.hooks import hookimpl
from iogate.settings import OPTIONS, UsageError, settings


class Sysfs:
    """A plugin that reads what sysfs tells of a loop device: no model, no firmware."""

    def __init__(self, facts: dict[str, object]) -> None:
        self.facts = facts

    @hookimpl
    def iogate_environment(self, target: str | None) -> dict[str, object]:
        out: dict[str, object] = {"host": "ci-7", "kernel": "6.8.0"}
        if target is not None:
            out.update(self.facts)
        return out


@pytest.fixture
def pm() -> pluggy.PluginManager:
    pm = hooks.new_plugin_manager(load_entrypoints=False)
    pm.register(Sysfs({"target.device": "loop3", "target.firmware": "READ"}))
    return pm


# -- reading them ------------------------------------------------------------------------------

def test_facts_from_the_environment_and_the_command_line_which_wins() -> None:
    environ = {"IOGATE_FACT_FIRMWARE": "FW1", "IOGATE_FACT_DEVICE_MODEL": " ACME 1TB ",
               "PATH": "/bin", "IOGATE_FACTS": "not ours"}
    assert environment.given_facts(None, environ) == {"device_model": "ACME 1TB",
                                                      "firmware": "FW1"}
    assert environment.given_facts(["firmware=FW2", "kernel = 6.9"], environ) == {
        "device_model": "ACME 1TB", "firmware": "FW2", "kernel": "6.9"}
    # A value may hold '=' and ','; the same value twice is no conflict.
    assert environment.given_facts(["host=a=b,c", "host=a=b,c"], {}) == {"host": "a=b,c"}


def test_an_empty_variable_counts_as_unset() -> None:
    assert environment.given_facts([], {"IOGATE_FACT_FIRMWARE": "  "}) == {}


@pytest.mark.parametrize(("texts", "environ", "message"), [
    (["firmwre=FW1"], {}, "--fact firmwre=FW1: unknown fact 'firmwre': facts that can be "
                          "given are device_model, firmware, host, kernel; did you mean "
                          "'firmware'?"),
    (["cpu=8"], {}, "--fact cpu=8: unknown fact 'cpu': facts that can be given are "
                    "device_model, firmware, host, kernel"),
    ([], {"IOGATE_FACT_MODEL": "x"}, "the environment variable IOGATE_FACT_MODEL: unknown "
                                     "fact 'model': facts that can be given are device_model, "
                                     "firmware, host, kernel; did you mean 'device_model'?"),
    (["iogate_version=9"], {}, "iogate_version is iogate's own fact and cannot be given"),
    (["FW1"], {}, "--fact FW1: not KEY=VALUE, e.g. firmware=FW2"),
    (["=FW1"], {}, "--fact =FW1: not KEY=VALUE"),
    (["firmware="], {}, "--fact firmware=: no value; give firmware=VALUE"),
    (["firmware=FW1", "firmware=FW2"], {},
     "--fact firmware=FW2: firmware is given twice, as 'FW1' and 'FW2'; a run has one "
     "firmware"),
])
def test_facts_that_cannot_be_given_are_refused_saying_why(
        texts: list[str], environ: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        environment.given_facts(texts, environ)
    if "did you mean" not in message:
        assert "did you mean" not in str(info.value)


def _values(**given: Any) -> Any:
    defaults = {o.name: o.default for o in OPTIONS}
    return lambda name: given.get(name.replace("-", "_"), defaults.get(name))


def test_settings_carry_the_facts_of_the_run_and_spell_the_option() -> None:
    run = settings(_values(fact=["firmware=FW2"]), environ={"IOGATE_FACT_HOST": "lab-3"})
    assert run.facts == {"firmware": "FW2", "host": "lab-3"}
    assert settings(_values(), environ={}).facts == {}
    with pytest.raises(UsageError) as info:
        settings(_values(fact=["firmwre=FW2"]), "--iogate-", environ={})
    assert info.value.option == "fact"
    assert str(info.value).startswith("--iogate-fact firmwre=FW2: unknown fact 'firmwre'")


# -- applying them -----------------------------------------------------------------------------

def test_capture_applies_given_facts_over_what_was_read(pm: pluggy.PluginManager) -> None:
    read = environment.capture("/dev/loop3", pm=pm)
    assert read["target.firmware"] == "READ"
    assert "firmware" not in read
    assert "given" not in read
    given = {"firmware": "FW2", "device_model": "ACME 1TB", "host": "dut-1"}
    facts = environment.capture("/dev/loop3", pm=pm, given=given)
    assert facts["given"] == ["device_model", "firmware", "host"]
    assert facts["firmware"] == facts["target.firmware"] == "FW2"
    assert facts["device_model"] == facts["target.device_model"] == "ACME 1TB"
    assert facts["host"] == "dut-1"
    assert facts["kernel"] == "6.8.0"
    assert environment.target_facts(facts)["target.firmware"] == "FW2"
    # Without a target, the run's facts alone: no target.* key made up.
    shared = environment.capture(None, pm=pm, given=given)
    assert shared["firmware"] == "FW2"
    assert "target.firmware" not in shared
    # Facts are given per capture: one without them reads sysfs as it is.
    assert environment.capture("/dev/loop3", pm=pm)["target.firmware"] == "READ"


def test_iogate_version_is_never_given() -> None:
    with pytest.raises(ValueError, match="facts that cannot be given: iogate_version"):
        environment.capture(given={"iogate_version": "9"})
    assert environment.capture(given={"kernel": "6.9"})["iogate_version"] != "9"


# -- reporting them ----------------------------------------------------------------------------

def test_the_results_document_names_the_facts_given() -> None:
    assert "given" not in report.results_document([])["environment"]
    env = report.results_document([], facts={"firmware": "FW2",
                                             "device_model": "ACME 1TB"})["environment"]
    assert env["given"] == ["device_model", "firmware"]
    assert env["firmware"] == "FW2"
    assert env["device_model"] == "ACME 1TB"


def test_the_markdown_summary_names_the_facts_given() -> None:
    text = markdown.render([], {"host": "ci-7", "firmware": "FW2", "given": ["firmware"]})
    assert "host ci\\-7 · given, not read: firmware FW2" in text
    assert "given" not in markdown.render([], {"host": "ci-7", "firmware": "FW2"})


def test_a_baseline_from_results_keys_on_the_facts_given() -> None:
    document = report.results_document([], facts={"firmware": "FW1"})
    document["cases"] = [{"id": "s.suite.yaml::a", "outcome": "passed",
                          "environment": {"target.device": "loop3", "target.firmware": "FW1"},
                          "metrics": {"read.iops": 1.0}}]
    [entry] = Baseline.from_results(document).entries
    assert entry.environment["firmware"] == "FW1"
