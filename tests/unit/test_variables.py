"""Variable expansion: references, defaults, required values, typing, problems at positions."""

import os

import pytest

from iogate.spec.loader import MarkedMap, load_yaml_text
from iogate.spec.variables import Expander, expand_tree


def expand(text, env):
    return Expander(env).expand(text)[0]


@pytest.mark.parametrize(("text", "expected"), [
    ("${A}", "1"), ("x${A}y", "x1y"), ("$A", "1"), ("$A/$B", "1/two"), ("$$A", "$A"),
    ("cost: 5$", "cost: 5$"), ("$ 5", "$ 5"), ("${U:-dflt}", "dflt"), ("${A:-dflt}", "1"),
    ("${E:-dflt}", "dflt"), ("${U:-${A}x}", "1x"), ("no refs", "no refs"), ("$$", "$"),
])
def test_expand(text, expected):
    assert expand(text, {"A": "1", "B": "two", "E": ""}) == expected


def test_builtins_and_env_precedence():
    assert expand("${ncpus}", {}) == str(len(os.sched_getaffinity(0)))
    assert expand("${pagesize}", {}) == str(os.sysconf("SC_PAGE_SIZE"))
    assert int(expand("${mb_memory}", {})) > 0
    assert expand("${ncpus}", {"ncpus": "7"}) == "7"  # the environment wins


def test_default_env_is_os_environ(monkeypatch):
    monkeypatch.setenv("IOGATE_TEST_VAR", "42")
    assert expand("${IOGATE_TEST_VAR}", None) == "42"


def tree_of(text, env):
    root = load_yaml_text(text, "f.yaml")
    return expand_tree(root, "f.yaml", env)


def test_whole_reference_becomes_int_or_bool_and_keys_stay():
    tree, problems = tree_of("n: ${N}\nb: ${B}\ns: x${N}\nz: ${Z}\n$N: 1\nm: $N\n",
                             {"N": "8", "B": "true", "Z": "007"})
    assert problems == []
    assert tree == {"n": 8, "b": True, "s": "x8", "z": "007", "$N": 1, "m": 8}
    assert isinstance(tree, MarkedMap)
    assert tree.value_marks["s"] == (3, 4)


def test_all_problems_are_collected_with_positions():
    text = "a: ${SIZE}\nb:\n  - ok\n  - ${NEED:?set NEED to the device}\nc: ${A:x}\nd: ${oops\n"
    _, problems = tree_of(text, {"A": "1"})
    assert [str(p) for p in problems] == [
        "f.yaml:1:4: a: variable 'SIZE' is not set; set it or write ${SIZE:-default}",
        "f.yaml:4:5: b[1]: NEED: set NEED to the device",
        "f.yaml:5:4: c: '${A:x}': after the name, only ':-default' or ':?message' may follow",
        "f.yaml:6:4: d: unterminated '${' in '${oops': add the closing '}'",
    ]


def test_required_with_value_passes():
    tree, problems = tree_of("dev: ${DEV:?say which device}\n", {"DEV": "/dev/nvme0n1"})
    assert problems == []
    assert tree["dev"] == "/dev/nvme0n1"
