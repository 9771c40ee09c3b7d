"""Malformed suites: each one ends in a located SuiteError, never another exception, a hang
or unbounded memory; a few go through ``iogate validate`` to check what the user sees."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.spec import MAX_WORKLOADS, load_suite, loader, variables
from iogate.spec.loader import (
    MAX_ALIAS_VALUES,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_VALUES,
    load_yaml,
    load_yaml_text,
    read_suite_text,
)

# A valid workload whose next line is line 6.
HEAD = "suite: s\nworkloads:\n  - name: a\n    rw: randread\n    size: 1m\n"
PEAK_BYTES = 64 << 20


def w(extra: str) -> str:
    return HEAD + extra


def laughs(levels: int, fanout: int) -> str:
    """The billion-laughs pattern: each anchor is a list of ``fanout`` aliases of the last."""
    lines = ["suite: s", "l0: &l0 [lol]"]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * fanout) + "]")
    return "\n".join(lines) + "\nworkloads: []\n"


def nested_defaults(depth: int) -> str:
    return "${V0:-" * depth + "x" + "}" * depth


@dataclass(frozen=True)
class Bad:
    text: str | bytes
    fragment: str  # in the message of the problem that names the mistake
    line: int | None  # where that problem is, or None: the file as a whole
    env: dict[str, str] = field(default_factory=dict)


CORPUS = [
    # -- YAML syntax ------------------------------------------------------------------
    pytest.param(Bad('suite: "s\nworkloads: []\n', "invalid YAML", 3), id="unclosed-double-quote"),
    pytest.param(Bad("suite: 's\nworkloads: []\n", "invalid YAML", 3), id="unclosed-single-quote"),
    pytest.param(Bad("suite: s\nworkloads:\n  - name: a\n   rw: read\n", "invalid YAML", 4),
                 id="bad-indentation"),
    pytest.param(Bad("suite: s\nworkloads:\n\t- name: a\n", "invalid YAML", 3),
                 id="tab-indentation"),
    pytest.param(Bad("suite: s\nworkloads: [{name: a, rw: read\n", "invalid YAML", 3),
                 id="unclosed-flow-mapping"),
    pytest.param(Bad("suite: s\nworkloads: [\n", "invalid YAML", 3), id="unclosed-flow-list"),
    pytest.param(Bad("suite: s: t\nworkloads: []\n", "invalid YAML", 1),
                 id="colon-in-plain-value"),
    pytest.param(Bad("suite: *nope\nworkloads: []\n", "undefined alias", 1),
                 id="undefined-alias"),
    pytest.param(Bad("suite: &a s\nworkloads: &a []\n", "duplicate anchor", 2),
                 id="duplicate-anchor"),
    pytest.param(Bad(HEAD + "---\n" + HEAD, "single document", 6), id="two-documents"),
    # -- YAML tags ----------------------------------------------------------------------
    pytest.param(Bad(w('    filename: !!python/object/apply:os.system ["echo x"]\n'),
                     "'!!python/object/apply:os.system' is not allowed", 6),
                 id="tag-python-object-apply"),
    pytest.param(Bad("suite: !!python/name:os.system\nworkloads: []\n",
                     "'!!python/name:os.system' is not allowed", 1), id="tag-python-name"),
    pytest.param(Bad("suite: s\nworkloads:\n  - !!python/object/new:os.system {name: a}\n",
                     "'!!python/object/new:os.system' is not allowed", 3),
                 id="tag-python-object-new-on-mapping"),
    pytest.param(Bad(w("    filename: !!binary aGVsbG8=\n"), "'!!binary' is not allowed", 6),
                 id="tag-binary"),
    pytest.param(Bad(w("    filename: !mine x\n"), "'!mine' is not allowed", 6),
                 id="tag-custom"),
    pytest.param(Bad(w("    expect: !!set {errors, read.iops}\n"), "'!!set' is not allowed",
                     6), id="tag-set"),
    pytest.param(Bad(w("    filename: !!timestamp 2001-12-14\n"),
                     "'!!timestamp' is not allowed", 6), id="tag-timestamp"),
    pytest.param(Bad(w("    expect: !!omap [errors: '== 0']\n"), "'!!omap' is not allowed", 6),
                 id="tag-omap"),
    pytest.param(Bad("%TAG !p! tag:yaml.org,2002:python/\n---\nsuite: !p!name:os.system\n"
                     "workloads: []\n", "'!!python/name:os.system' is not allowed", 3),
                 id="tag-directive-shorthand"),
    pytest.param(Bad(w("    iodepth: !!int 0x10\n"), "'0x10' is not a valid !!int", 6),
                 id="tag-int-hex"),
    pytest.param(Bad(w("    direct: !!bool yes\n"), "'yes' is not a valid !!bool", 6),
                 id="tag-bool-yes"),
    pytest.param(Bad(w("    iodepth: !!float 1:30\n"), "'1:30' is not a valid !!float", 6),
                 id="tag-float-sexagesimal"),
    # -- anchors, aliases, merges ---------------------------------------------------------
    pytest.param(Bad(laughs(9, 9), f"aliases here copy more than {MAX_ALIAS_VALUES}", 7),
                 id="billion-laughs"),
    pytest.param(Bad("suite: s\nbig: &b [" + ", ".join(["1"] * 1000) + "]\n"
                     "many: [" + ", ".join(["*b"] * 1000) + "]\nworkloads: []\n",
                     "*b alone copies 1001", 3), id="one-anchor-many-aliases"),
    pytest.param(Bad("suite: s\nx: &a [*a]\nworkloads: []\n", "recursive alias", 2),
                 id="recursive-anchor-list"),
    pytest.param(Bad("suite: s\nx: &a {b: *a}\nworkloads: []\n", "recursive alias", 2),
                 id="recursive-anchor-mapping"),
    pytest.param(Bad("suite: s\nworkloads:\n  - &w\n    name: a\n    <<: *w\n",
                     "recursive alias", 5), id="merge-of-itself"),
    pytest.param(Bad("suite: s\nx: &k [1]\nworkloads:\n  - name: a\n    *k : 1\n",
                     "a key must be a plain value", 5), id="alias-to-list-as-key"),
    pytest.param(Bad("suite: s\nworkloads:\n  - name: &n a\n    *n : read\n",
                     "unknown key 'a'", 4), id="alias-to-scalar-as-key"),
    pytest.param(Bad(w("    <<: 5\n"), "'<<' merges only mappings", 6), id="merge-of-scalar"),
    pytest.param(Bad("suite: s\nd: &d {rw: read}\nworkloads:\n  - name: a\n    size: 1m\n"
                     "    <<: [*d, [1]]\n", "'<<' merges only mappings", 6),
                 id="merge-of-list"),
    pytest.param(Bad("suite: s\nd: &d {rw: read}\nworkloads:\n  - name: a\n    size: 1m\n"
                     "    rw: read\n    expect: {<<: *d}\n", "unknown metric 'rw'", 2),
                 id="merge-into-expect"),
    pytest.param(Bad("suite: s\na: &a " + "[" * 40 + "1" + "]" * 40 + "\nb: " + "[" * 40
                     + "*a" + "]" * 40 + "\nworkloads: []\n", "aliases nest", 3),
                 id="aliases-nest-too-deep"),
    pytest.param(Bad("suite: s\nx: " + "[" * 10_000 + "]" * 10_000 + "\nworkloads: []\n",
                     f"nested more than {MAX_DEPTH} levels", 2), id="nesting-10000-deep"),
    pytest.param(Bad("suite: s\nx:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 200))
                     + "workloads: []\n", f"nested more than {MAX_DEPTH} levels", 66),
                 id="block-nesting-200-deep"),
    # -- wrong types at every level -----------------------------------------------------
    pytest.param(Bad("- suite: s\n  workloads: []\n", "a suite must be a mapping", 1),
                 id="suite-is-a-list"),
    pytest.param(Bad("just some text\n", "a suite must be a mapping", 1),
                 id="suite-is-a-string"),
    pytest.param(Bad("suite: {a: 1}\nworkloads: []\n", "expected a string", 1),
                 id="suite-name-is-a-mapping"),
    pytest.param(Bad("suite: s\nworkloads: {a: {rw: read}}\n", "expected a list", 2),
                 id="workloads-is-a-mapping"),
    pytest.param(Bad("suite: s\nworkloads:\n  - just a string\n", "expected a mapping", 3),
                 id="workload-is-a-string"),
    pytest.param(Bad(w("    expect: ['<= 1ms']\n"), "expected a mapping", 6),
                 id="expect-is-a-list"),
    pytest.param(Bad(w("    expect:\n      read.clat.p99: {a: 1}\n"), "is not a comparison", 7),
                 id="expectation-is-a-mapping"),
    pytest.param(Bad("suite: s\ndefaults: [1]\nworkloads: []\n", "expected a mapping", 2),
                 id="defaults-is-a-list"),
    pytest.param(Bad(w("    precondition: {rw: write}\n"), "expected a list", 6),
                 id="precondition-is-a-mapping"),
    pytest.param(Bad(w("    iodepth: [1, 2]\n"), "expected an integer", 6),
                 id="iodepth-is-a-list"),
    pytest.param(Bad(w("    1: 2\n"), "Keys should be strings", 6), id="integer-key"),
    pytest.param(Bad(w("    ? " + "k" * 200_000 + "\n    : 1\n"),
                     "a key of 200000 characters is too long", 6), id="key-200000-chars"),
    pytest.param(Bad(w("    iodepth: " + "x" * 1_000_000 + "\n"),
                     "got the string '" + "x" * 40 + "...'", 6),
                 id="1-MB-string-for-an-integer"),
    pytest.param(Bad(w("    bs: " + "x" * 100_000 + "\n"), "got the string 'xxx", 6),
                 id="100-KB-string-for-a-size"),
    pytest.param(Bad("suite: s\nworkloads:\n  - name: a\n    rw: randread\n    size: "
                     + "1+" * 5000 + "1\n", "more than 256 terms", 5),
                 id="expression-5000-terms"),
    pytest.param(Bad(w("    iodepth: " + "(" * 100 + "1" + ")" * 100 + "\n"),
                     "nested more than 64 levels", 6), id="expression-100-parentheses"),
    pytest.param(Bad(w("    iodepth: 1" + "x" * 100_000 + " + 1\n"), "is not a unit", 6),
                 id="expression-long-unit"),
    # -- huge numbers -------------------------------------------------------------------
    pytest.param(Bad(w("    iodepth: 1000000000000000000000000000000\n"), "must be at most", 6),
                 id="iodepth-10e30"),
    pytest.param(Bad("suite: s\nworkloads:\n  - name: a\n    rw: randread\n    size: 1e400\n",
                     "got the number inf", 5), id="size-1e400"),
    pytest.param(Bad(w("    runtime: 99999999999999999999h\n"), "must be at most", 6),
                 id="runtime-99999999999999999999h"),
    pytest.param(Bad(w("    iodepth: " + "9" * 10_000 + "\n"),
                     "a number of 10000 characters is too long", 6), id="number-10000-digits"),
    pytest.param(Bad(w("    rwmixread: 1." + "5" * 10_000 + "\n"), "too long", 6),
                 id="float-10000-digits"),
    pytest.param(Bad(w("    iodepth: .inf\n"), "expected an integer", 6), id="iodepth-inf"),
    pytest.param(Bad(w("    expect:\n      read.iops: '>= " + "9" * 5000 + "'\n"),
                     "a number of 5000 digits", 7), id="threshold-5000-digits"),
    # -- digits of other scripts, which int(), float() and \\d would read -----------------
    pytest.param(Bad(w("    bs: '４k'\n"), "'４' (U+FF14 FULLWIDTH DIGIT FOUR) is not an "
                     "ASCII digit: write numbers with the digits 0-9", 6),
                 id="fullwidth-digit-size"),
    pytest.param(Bad(w("    runtime: ٣s\n"), "is not an ASCII digit", 6),
                 id="arabic-digit-duration"),
    pytest.param(Bad(w("    iodepth: 2 * ४\n"), "is not an ASCII digit", 6),
                 id="devanagari-digit-in-expression"),
    pytest.param(Bad(w("    random_distribution: zipf:１.２\n"), "is not an ASCII digit", 6),
                 id="fullwidth-digit-distribution"),
    pytest.param(Bad(w("    expect:\n      read.iops: '>= ４k'\n"), "is not an ASCII digit", 7),
                 id="fullwidth-digit-threshold"),
    pytest.param(Bad(w("    expect:\n      read.bw: '>= 1MiB/s\u3000'\n"),
                     "(U+3000 IDEOGRAPHIC SPACE) is not ASCII", 7),
                 id="ideographic-space-bandwidth"),
    pytest.param(Bad(w("    expect:\n      read.iops: '>= baseline * baseline'\n"),
                     "multiplies an IOPS figure by an IOPS figure", 7), id="baseline-squared"),
    # -- unset and hostile variables ----------------------------------------------------
    pytest.param(Bad(w("    filename: ${A:-${B}}\n"), "variable 'B' is not set", 6),
                 id="var-nested-default-unset"),
    pytest.param(Bad(w("    filename: x${\n"), "unterminated '${'", 6), id="var-unterminated"),
    pytest.param(Bad(w("    filename: ${}\n"), "is not a variable reference", 6),
                 id="var-empty-braces"),
    pytest.param(Bad(w("    filename: ${A!}\n"), "after the name", 6), id="var-junk-after-name"),
    pytest.param(Bad(w("    filename: ${A:?}\n"), "variable 'A' is not set", 6),
                 id="var-required-empty-message"),
    pytest.param(Bad(w("    filename: ${A:?}\n"), "variable 'A' is empty", 6, {"A": ""}),
                 id="var-required-set-but-empty"),
    pytest.param(Bad(w("    iodepth: ${X}\n"), "got the string '${X}'", 6, {"X": "${X}"}),
                 id="var-value-is-a-reference"),
    pytest.param(Bad(w("    filename: /tmp/${N}\n"), "holds a NUL character", 6,
                       {"N": "a\0b"}), id="var-nul-from-env"),
    pytest.param(Bad(w("    filename: ${L}\n"), "expands to more than", 6, {"L": "x" * (2 << 20)}),
                 id="var-2-MiB-value"),
    pytest.param(Bad(w("    filename: " + "${L}" * 200 + "\n"), "expands to more than", 6,
                     {"L": "x" * 10_000}), id="var-many-references"),
    pytest.param(Bad(w("    filename: " + nested_defaults(50) + "\n"),
                     "defaults nest more than", 6), id="var-defaults-50-deep"),
    pytest.param(Bad(w("    filename: " + "${" * 5000 + "\n"), "unterminated", 6),
                 id="var-5000-openers"),
    pytest.param(Bad(w("    filename: ${" + "V" * 100_000 + "}\n"),
                     "variable '" + "V" * 40 + "...' is not set", 6), id="var-name-100000-chars"),
    pytest.param(Bad(w("    sweep: {iodepth: ['" + "1" * 1000 + "', '" + "1" * 1000 + "']}\n"),
                     "'" + "1" * 40 + "...' is already in the values", 6),
                 id="sweep-long-repeated-value"),
    # -- NUL bytes, encodings, empty files ----------------------------------------------
    pytest.param(Bad("suite: s\nworkloads:\n  - name: a\0\n",
                     "a NUL character is not allowed in a suite file", 3), id="nul-in-text"),
    pytest.param(Bad("suite: s\nworkloads:\n  - name: a\x07\n", "U+0007 is not allowed", 3),
                 id="bell-in-text"),
    pytest.param(Bad(w('    "r\\0w": read\n'), "a NUL character is not allowed in a key", 6),
                 id="nul-escape-in-key"),
    pytest.param(Bad(w('    filename: "a\\0b"\n'), "filename contains a NUL byte", 6),
                 id="nul-escape-in-value"),
    pytest.param(Bad('description: "a\\0b"\n' + HEAD, "the description holds a NUL", 1),
                 id="nul-escape-in-description"),
    pytest.param(Bad('description: "ring \\a"\n' + HEAD, "control character U+0007", 1),
                 id="bell-escape-in-description"),
    pytest.param(Bad(w('    expect:\n      read.iops: ">= 1\\0"\n'), "'>= 1\\x00'", 7),
                 id="nul-escape-in-expectation"),
    pytest.param(Bad(w('    iodepth: "4\\0"\n'), "got the string '4\\x00'", 6),
                 id="nul-escape-in-integer"),
    pytest.param(Bad(b"suite: s\nworkloads: \xff\n", "not UTF-8", 2), id="invalid-utf8-byte"),
    pytest.param(Bad("suite: caf\u00e9\nworkloads: []\n".encode("latin-1"), "not UTF-8", 1),
                 id="latin-1-file"),
    pytest.param(Bad("\ufeff" + w("    bogus: 1\n"), "unknown key 'bogus'", 6),
                 id="bom-then-error"),
    pytest.param(Bad("suite: s\n\ufeffworkloads: []\n", "invalid YAML", 2), id="bom-mid-file"),
    pytest.param(Bad("", "the file is empty", None), id="empty-file"),
    pytest.param(Bad("# a comment\n# another\n", "the file is empty", None),
                 id="only-comments"),
    pytest.param(Bad("\n\n   \n", "the file is empty", None), id="only-blank-lines"),
    pytest.param(Bad("---\n...\n", "a suite must be a mapping", 2), id="empty-document"),
    # -- duplicate keys -----------------------------------------------------------------
    pytest.param(Bad("suite: s\nsuite: t\nworkloads: []\n", "duplicate key 'suite'", 2),
                 id="duplicate-top-level"),
    pytest.param(Bad(w("    rw: read\n"), "duplicate key 'rw'", 6), id="duplicate-in-workload"),
    pytest.param(Bad(w("    expect:\n      errors: '== 0'\n      errors: '== 1'\n"),
                     "duplicate key 'errors'", 8), id="duplicate-in-expect"),
    pytest.param(Bad("suite: s\nd: &d {rw: read}\ne: &e {size: 1m}\nworkloads:\n  - name: a\n"
                     "    <<: *d\n    <<: *e\n", "duplicate key '<<' (first defined on line 6): "
                     "merge several mappings with one key, '<<: [*d, *e]'", 7),
                 id="two-merge-keys"),
    pytest.param(Bad(HEAD + HEAD[HEAD.index("  - "):], "already used on line 3", 6),
                 id="duplicate-workload-name"),
    # -- conflicting options ------------------------------------------------------------
    pytest.param(Bad(w("    bs: 4k\n    bssplit: 4k/50:8k/50\n"), "exclude each other", 7),
                 id="bs-and-bssplit"),
    pytest.param(Bad(w("    ioengine: psync\n    iodepth: 8\n"), "iodepth must be 1", 7),
                 id="psync-with-iodepth-8"),
    pytest.param(Bad("suite: s\nworkloads:\n  - name: a\n    rw: randrw\n    size: 1m\n"
                     "    rwmixread: 70\n    rwmixwrite: 40\n", "must add up to 100", 7),
                 id="rwmixread-70-rwmixwrite-40"),
    pytest.param(Bad(w("    time_based: true\n"), "needs a runtime", 6),
                 id="time-based-without-runtime"),
    # -- names and sizes of the suite itself ----------------------------------------------
    pytest.param(Bad("suite: s\nworkloads:\n  - name: " + "n" * 129 + "\n    rw: read\n"
                     "    size: 1m\n", "a name of 129 characters is too long: at most 128", 3),
                 id="workload-name-129-chars"),
    pytest.param(Bad("suite: " + "s" * 5000 + "\nworkloads: []\n", "too long", 1),
                 id="suite-name-5000-chars"),
    pytest.param(Bad(w("    sweep: {iodepth: [" + ", ".join(map(str, range(1, 101)))
                       + "], numjobs: [" + ", ".join(map(str, range(1, 101))) + "]}\n")
                     + HEAD[HEAD.index("  - "):].replace("name: a", "name: b")
                     + "    sweep: {iodepth: [1, 2]}\n",
                     "the suite makes 10002 workloads", 2), id="sweeps-above-10000-workloads"),
    pytest.param(Bad(w("    sweep: {iodepth: [" + ", ".join(map(str, range(1, 102)))
                       + "], numjobs: [" + ", ".join(map(str, range(1, 101))) + "]}\n"),
                     "the sweep has 10100 points; at most 10000", 6),
                 id="one-sweep-above-10000-points"),
    pytest.param(Bad(w('    runtime: 3s\n    expect:\n      read.iops: ">= 1 in 99%"\n'
                       '      read.bw: ">= 1 in 99% of 500ms"\n'),
                     "one interval: 1s at line 8, 500ms at line 9", 9),
                 id="windows-of-two-intervals"),
    # -- verification -------------------------------------------------------------------
    pytest.param(Bad(w("    verify: sha3-256\n"), "use crc32c, crc32, crc64, xxhash, xxh32, "
                     "xxh64, md5, sha1, sha256, sha512, meta or none", 6),
                 id="verify-sha3"),
    pytest.param(Bad(w("    verify: crc32c\n"), "needs rw write, randwrite, rw or randrw", 6),
                 id="verify-of-reads"),
    pytest.param(Bad(w("    verify_fatal: true\n"), "verify_fatal needs verify", 6),
                 id="verify-fatal-without-verify"),
]


BY_ID: dict[str, Bad] = {str(p.id): p.values[0] for p in CORPUS}  # type: ignore[misc]


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "bad.suite.yaml"
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def load_bounded(path: Path, env: dict[str, str]) -> SuiteError:
    """Load a suite that must be refused; check its peak memory as well (a bound that holds
    on any machine; how long a load takes is not asserted: a loaded machine is slow)."""
    tracemalloc.start()
    try:
        with pytest.raises(SuiteError) as info:  # any other exception fails the test
            load_suite(path, env=env)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < PEAK_BYTES, f"peak {peak >> 20} MiB"
    return info.value


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 40


@pytest.mark.parametrize("case", CORPUS)
def test_malformed_suite_is_a_located_suite_error(tmp_path, case: Bad):
    path = write(tmp_path, case.text)
    error = load_bounded(path, case.env)
    assert error.problems
    assert all(p.file == str(path) for p in error.problems)
    named = [p for p in error.problems if case.fragment in p.message]
    assert named, str(error)
    if case.line is None:
        assert named[0].line == 0
    else:
        assert case.line in [p.line for p in named], str(error)
        # Everything found in the document's text has a position.
        assert all(p.line > 0 and p.col > 0 for p in error.problems), str(error)
    assert len(str(error)) < 20_000  # no message quotes a huge value in full
    assert all(p.message.isprintable() for p in error.problems), str(error)  # escaped


# A handful through the command line: exit code 2, a location, no traceback.
CLI_CASES = ["tag-python-object-apply", "billion-laughs", "nul-in-text", "bad-indentation",
             "number-10000-digits", "recursive-anchor-list"]


@pytest.mark.parametrize("name", CLI_CASES)
def test_validate_command_reports_a_location(tmp_path, name):
    bad = BY_ID[name]
    path = write(tmp_path, bad.text)
    env = dict(os.environ)
    run = subprocess.run([sys.executable, "-m", "iogate", "validate", str(path)],
                         capture_output=True, text=True, env=env, timeout=30, check=False)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert f"{path}:{bad.line}:" in run.stderr, run.stderr
    assert bad.fragment in run.stderr, run.stderr


# -- inputs that look hostile but are fine, and the limits themselves --------------------

def test_single_pass_expansion_and_literal_dollars(tmp_path):
    text = w("    filename: ${X}-$-${Y:-$}-5$\n")
    case = load_suite(write(tmp_path, text), env={"X": "${X}${X}"}).cases[0]
    assert case.workload.filename == "${X}${X}-$-$-5$"


def test_anchors_and_merges_still_share_settings(tmp_path):
    text = ("suite: s\ndefaults:\n  size: 1m\ncommon: &common {rw: randread, bs: 4k}\n"
            "workloads:\n  - {name: a, <<: *common}\n  - {name: b, <<: *common, bs: 8k}\n")
    # 'common' is not a suite key: the merges work, the stray key is reported.
    with pytest.raises(SuiteError) as info:
        load_suite(write(tmp_path, text))
    assert [p.path for p in info.value.problems] == ["common"]
    ok = text.replace("common: &common {rw: randread, bs: 4k}\n", "").replace(
        "workloads:\n  - {name: a, <<: *common}",
        "workloads:\n  - &common {name: a, rw: randread, bs: 4k}").replace(
        "<<: *common, bs: 8k", "<<: *common, name: b, bs: 8k").replace("{name: b, ", "{")
    cases = load_suite(write(tmp_path, ok)).cases
    assert [(c.id, c.workload.rw, c.workload.bs.read) for c in cases] == [
        ("a", "randread", 4096), ("b", "randread", 8192)]


def test_aliases_just_under_the_budget_load():
    n = 499  # an anchor of 1 + n values, aliased as often as the budget allows
    copies = MAX_ALIAS_VALUES // (n + 1)
    text = "a: &a [" + ", ".join(["1"] * n) + "]\nb: [" + ", ".join(["*a"] * copies) + "]\n"
    root = load_yaml_text(text)
    assert len(root["b"]) == copies
    assert root["b"][-1] == [1] * n
    with pytest.raises(SuiteError, match=f"aliases here copy more than {MAX_ALIAS_VALUES}"):
        load_yaml_text(text.replace("b: [", "b: [*a, "))


def test_plain_documents_are_bounded_too():
    items = ", ".join(["1"] * (MAX_VALUES // 2))
    with pytest.raises(SuiteError, match=f"the document holds more than {MAX_VALUES}"):
        load_yaml_text(f"a: [{items}]\nb: [{items}]\n")


def test_nesting_at_the_limit_loads():
    inner = "[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1)
    assert load_yaml_text(f"x: {inner}\n")["x"]  # the top mapping is the first level
    with pytest.raises(SuiteError, match="nested more than"):
        load_yaml_text(f"x: [{inner}]\n")


def test_decoding_errors_are_located_when_read_by_the_loader(tmp_path):
    path = write(tmp_path, b"suite: s\nworkloads: [caf\xe9]\n")
    with pytest.raises(SuiteError) as info:
        read_suite_text(path)
    (problem,) = info.value.problems
    assert (problem.line, problem.col) == (2, 16)
    assert "not UTF-8" in problem.message
    with pytest.raises(SuiteError, match="not UTF-8"):
        load_yaml(path)


def test_oversized_file_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.suite.yaml"
    with open(path, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(SuiteError, match="larger than"):
        read_suite_text(path)


PYTHON_PARSER_CASES = ["tag-python-object-apply", "billion-laughs", "nesting-10000-deep",
                       "nul-in-text", "recursive-anchor-list", "unclosed-flow-mapping"]


@pytest.mark.parametrize("name", PYTHON_PARSER_CASES)
def test_same_refusals_without_libyaml(tmp_path, monkeypatch, name):
    class PythonSuiteLoader(loader._SuiteComposer, loader._PythonEvents):
        def __init__(self, text: str, *limits: Mapping[str, int]) -> None:
            loader._PythonEvents.__init__(self, text)
            loader._SuiteComposer.__init__(self, *limits)

    monkeypatch.setattr(loader, "SuiteLoader", PythonSuiteLoader)
    bad = BY_ID[name]
    error = load_bounded(write(tmp_path, bad.text), bad.env)
    assert any(bad.fragment in p.message and p.line == bad.line for p in error.problems), \
        str(error)


def big_suite(workloads: int, target_bytes: int) -> str:
    """A suite of ``workloads`` valid workloads, padded with comments to ``target_bytes``."""
    pad = max(0, target_bytes // workloads - 120)
    parts = ["suite: big\ndefaults:\n  size: 1m\n  ioengine: null\nworkloads:\n"]
    for i in range(workloads):
        parts.append(f"  - name: w{i}\n    rw: randread\n    bs: 4k\n    iodepth: {1 + i % 32}\n"
                     f"    # {'x' * pad}\n    expect:\n      read.iops: '>= 1k'\n")
    return "".join(parts)


def test_ten_megabyte_suite_of_10000_workloads_is_bounded(tmp_path):
    text = big_suite(10_000, 10_500_000)
    assert len(text) >= 10_000_000
    path = write(tmp_path, text)
    # In a child process: tracemalloc would slow this load several times over, and the
    # child's peak resident size is the memory it really took.
    # The child says its own peak: RUSAGE_CHILDREN would be the largest of every child this
    # test process ever waited for (an fio of another test among them).
    script = ("import resource, sys; from iogate.spec import load_suite; "
              "print(len(load_suite(sys.argv[1], env={}).cases), "
              "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    run = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, env=dict(os.environ), timeout=600,
                         check=True)
    cases, peak_kib = map(int, run.stdout.split())
    # Measured: about 4 s and 170-400 MiB here, most of both validating the 10000 workloads.
    # The time is not asserted (a loaded machine is slow); the memory bound holds anywhere.
    assert cases == 10_000
    assert peak_kib < 1 << 20, peak_kib >> 10


def test_a_suite_of_too_many_workloads_is_refused_as_it_is_read(tmp_path):
    # 145000 workloads, 10 MB: under the file size limit, far over MAX_WORKLOADS. Reading
    # stops at the first workload too many, so time and memory are those of 10000 workloads.
    def suite(n: int) -> str:
        return "suite: big\ndefaults:\n  size: 1m\n  rw: randread\nworkloads:\n" + "".join(
            f"  - name: workload-number-{i:06d}\n    iodepth: 4\n    bs: 4k\n    # {'x' * 8}\n"
            for i in range(n))

    text = suite(145_000)
    assert 10_000_000 <= len(text) < MAX_FILE_BYTES
    path = write(tmp_path, text)
    # In a child process, which reports its own peak resident size: the load as the user
    # runs it, without tracemalloc's slowdown, and no other child's memory mixed in.
    script = ("import resource, sys\nfrom iogate.errors import SuiteError\n"
              "from iogate.spec import load_suite\ntry:\n    load_suite(sys.argv[1], env={})\n"
              "except SuiteError as exc:\n    print(exc)\n"
              "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")

    def load(file: Path) -> tuple[str, int]:
        run = subprocess.run([sys.executable, "-c", script, str(file)], capture_output=True,
                             text=True, env=dict(os.environ),
                             timeout=600, check=True)
        message, peak_kib = run.stdout.splitlines()
        return message, int(peak_kib)

    message, peak_kib = load(path)
    # Located at the first workload too many: nothing after it was read.
    line = 6 + 4 * MAX_WORKLOADS
    assert text.splitlines()[line - 1] == f"  - name: workload-number-{MAX_WORKLOADS:06d}"
    assert message == (f"{path}:{line}:5: workloads: more than {MAX_WORKLOADS} workloads; a "
                       f"suite may have at most {MAX_WORKLOADS}: split it into several suites")
    # As much memory as a suite of just one workload too many (the same refusal), not more:
    # measured here 80 against 80 MiB, and 450 MiB for the large one when the whole list was
    # read first. Compared, not bounded: the interpreter's own share differs between hosts.
    small = tmp_path / "small.suite.yaml"
    small.write_text(suite(MAX_WORKLOADS + 1))
    _, small_kib = load(small)
    assert peak_kib <= small_kib * 1.25 + (16 << 10), (peak_kib >> 10, small_kib >> 10)


def test_the_value_count_stops_reading_at_the_value_too_many():
    text = "a: [" + ", ".join(["1"] * MAX_VALUES) + "]\nb: 2\n"
    with pytest.raises(SuiteError) as info:
        load_yaml_text(text)
    (problem,) = info.value.problems
    # The mapping, its key 'a' and the list are three values: item MAX_VALUES - 3 is one
    # too many, and reading stops there, not at the end of the list.
    assert (problem.line, problem.col) == (1, 5 + 3 * (MAX_VALUES - 3))
    assert problem.message.startswith(f"the document holds more than {MAX_VALUES} values")


def test_expansion_of_a_whole_suite_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(variables, "MAX_TREE_CHARS", 10_000)
    text = w("    filename: ${L}\n    group: ${L}\n    target_root: ${L}\n")
    error = load_bounded(write(tmp_path, text), {"L": "x" * 4000})
    assert [p.line for p in error.problems if "10000 characters in all" in p.message] == [8]


@pytest.mark.parametrize(("text", "value"), [
    ("!!str 123", "123"), ("!!int 12", 12), ("!!float 1.5", 1.5),
    ("!!bool true", True), ("!!null ~", None), ("!!seq [1]", [1]), ("!!map {a: 1}", {"a": 1}),
    ("<<", "<<"),
])
def test_standard_tags_that_fit_their_value_are_read(text, value):
    got = load_yaml_text(f"x: {text}\n")["x"]
    assert got == value
    assert isinstance(got, type(value))
