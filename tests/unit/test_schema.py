"""The JSON schema (``iogate schema``) against ``iogate validate``: the schema never refuses
what validate accepts (shipped suites, the documented examples, variables and expressions
anywhere, generated workloads), refuses what a schema can tell is wrong, describes every
key, and gives an editor the metric names to complete."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iogate.errors import SuiteError
from iogate.metrics import standard_paths
from iogate.spec import load_suite, load_suite_text
from iogate.spec.loader import load_yaml_text
from iogate.spec.models import WorkloadEntry
from iogate.spec.schema import REFERENCE, json_schema

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
HEAD = "suite: s\nworkloads:\n  - name: w\n    rw: randread\n    size: 1m\n"
WORKLOAD_KEYS = set(WorkloadEntry.model_fields)
ENV = {"SIZE": "1m", "BS": "8k", "QD": "4", "MODE": "randwrite", "TB": "true", "N": "2"}


@pytest.fixture(scope="module")
def validator() -> Any:
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def plain(node: Any) -> Any:
    """What an editor's YAML reader sees: plain containers (iogate's reader keeps ``on`` or
    ``0777`` as the strings a YAML 1.2 reader does)."""
    if isinstance(node, dict):
        return {k: plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    return node


def schema_errors(validator: Any, text: str) -> list[str]:
    data = plain(load_yaml_text(text))
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message[:200]}"
            for e in validator.iter_errors(data)]


def suite_with(extra: str) -> str:
    """The smallest suite, its one workload with the keys of ``extra`` ('key: value' lines)
    over its own."""
    keys = {"name": "w", "rw": "randread", "size": "1m"}
    for line in extra.splitlines():
        key, _, value = line.strip().partition(": ")
        keys[key] = value
    return "suite: s\nworkloads:\n" + "".join(
        f"{'  - ' if i == 0 else '    '}{k}: {v}\n" for i, (k, v) in enumerate(keys.items()))


def accepted(text: str, env: dict[str, str] | None = None) -> bool:
    try:
        load_suite_text(text, "t.suite.yaml", env=ENV if env is None else env)
    except SuiteError:
        return False
    return True


# -- what validate accepts, the schema accepts ----------------------------------------------

SHIPPED = sorted((ROOT / "suites").rglob("*.suite.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_suite_passes_both(validator, path):
    load_suite(path, env={})  # raises with every problem, were there one
    assert schema_errors(validator, path.read_text()) == []


# The documents whose YAML examples are checked: the README and every documentation page.
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def documented_examples() -> list[tuple[str, str]]:
    """The YAML examples of the README and the documentation as suites: whole suites as they
    are; a list of workloads, or keys of one workload, inside the smallest suite that holds
    them."""
    out = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT)
        for n, block in enumerate(re.findall(r"```ya?ml\n(.*?)```", text, re.S)):
            lines = [line for line in block.splitlines()
                     if line.strip() and not line.lstrip().startswith("#")]
            first_key = lines[0].strip().removeprefix("- ").partition(":")[0]
            if any(line.startswith("suite:") for line in lines):
                doc = block
            elif lines[0].lstrip().startswith("- name:"):
                doc = ("suite: readme\ndefaults: {size: 16m}\nworkloads:\n"
                       + textwrap.indent(textwrap.dedent(block), "  "))
            elif first_key in WORKLOAD_KEYS:
                doc = HEAD + textwrap.indent(textwrap.dedent(block), "    ")
            else:
                continue  # not a suite (a CI configuration, say)
            out.append((f"{where}:block{n}:{lines[0].strip()[:30]}", doc))
    return out


@pytest.mark.parametrize("doc", [d for _, d in documented_examples()],
                         ids=[i for i, _ in documented_examples()])
def test_every_documented_example_passes_both(validator, doc):
    load_suite_text(doc, "example.yaml", env={})
    assert schema_errors(validator, doc) == []


def test_the_documents_have_examples_of_each_shape():
    found = documented_examples()
    assert len(found) >= 5
    assert any("suite:" in d for _, d in found)
    assert any(i.startswith("README.md:") for i, _ in found)


WRITTEN = [  # each value as a suite may write it, with variables and expressions
    "numjobs: ${ncpus}", "numjobs: ${ncpus} * 2", "numjobs: $N", "iodepth: ${QD:-32}",
    "iodepth: 4 * 8", "rw: ${MODE:-randread}", "time_based: ${TB}\n    runtime: 1s",
    "direct: ${DIRECT:-false}", "bs: {read: '${BS}', write: 64k}", "bs: ${BS},64k",
    "filename: ['${SCRATCH:-/var/tmp}/a', /var/tmp/b]", "ioengine: ${ENGINE:-psync}",
    "buffer_pattern: 0xdeadbeef\n    rw: randwrite", "size: ${SIZE}", "size: 16m / 2",
    "runtime: ${RUNTIME:-2s}", "ramp_time: 500ms", "rate_iops: ${RATE:-1k}",
    "rate: 10MiB/s", "random_distribution: zipf:1.2", "name: w-${BS}",
    "randseed: ${SEED:-42}", "verify: ${VERIFY:-crc32c}\n    rw: write",
    "steady_state: {metric: read.iops, round: '${ROUND:-1s}', window: 3}",
    "expect: {read.iops: '>= ${MIN_IOPS:-10}', read.clat.p99.9: '<= 2ms'}",
    "precondition: [{rw: write, loops: '${LOOPS:-2}'}]", "offset: 25%\n    filename: /dev/null",
    "blockalign: 4k", "thinktime: 10us", "prio: ${PRIO:-4}",
    "rwmixread: ${MIX:-70}\n    rw: randrw",
]


@pytest.mark.parametrize("extra", WRITTEN)
def test_variables_and_expressions_pass_both(validator, extra):
    doc = suite_with(extra)
    assert accepted(doc), doc
    assert schema_errors(validator, doc) == [], doc


# Generated workloads: any mix of these keys and values that validate accepts, the schema
# accepts too.
POOL: dict[str, list[str]] = {
    "rw": ["read", "randwrite", "randrw", "${MODE}", "trim", "write"],
    "bs": ["4k", "64KiB", "${BS}", "{read: 4k, write: 8k}", "4k,8k", "512"],
    "bssplit": ["4k/50:8k/50", "[{bs: 4k, pct: 20}, {bs: 64k}]"],
    "iodepth": ["1", "32", "${QD}", "${ncpus} * 2", "4096"],
    "numjobs": ["1", "${ncpus}", "$N"],
    "ioengine": ["io_uring", "psync", "null", "libaio", "${ENGINE:-sync}"],
    "size": ["1m", "${SIZE}", "4096", "16m / 4"],
    "runtime": ["1s", "${RT:-2s}", "250ms", "3"],
    "time_based": ["true", "false", "${TB}"],
    "direct": ["true", "false"],
    "rwmixread": ["70", "${MIX:-30}"],
    "rate_iops": ["100", "1k", "70,30", "{read: 10, write: 5}"],
    "rate": ["1MiB/s", "100m"],
    "zero_buffers": ["true"],
    "buffer_compress_percentage": ["50"],
    "thinktime": ["10us"],
    "fsync": ["4"],
    "repeat": ["2", "${REPEAT:-1}"],
    "randrepeat": ["false"],
    "random_distribution": ["zipf:1.1", "zoned:50/10:50/90"],
    "expect": ["{read.iops: '>= 1'}", "{write.clat.p99: '<= 10ms'}", "{errors: '== 0'}"],
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(sorted(POOL)), st.integers(0, 5), max_size=7))
def test_generated_workloads_that_validate_accepts_the_schema_accepts(validator, choice):
    keys = "".join(f"    {k}: {POOL[k][i % len(POOL[k])]}\n" for k, i in choice.items()
                   if k not in ("rw", "size"))
    doc = (f"suite: s\nworkloads:\n  - name: w\n    rw: {POOL['rw'][choice.get('rw', 0) % 6]}"
           f"\n    size: {POOL['size'][choice.get('size', 0) % 4]}\n{keys}")
    if accepted(doc):
        assert schema_errors(validator, doc) == [], doc


# -- what a schema can tell is wrong, it refuses -----------------------------------------------

REFUSED = [
    ("bs: 4MB", "ambiguous unit"), ("size: 10GB", "ambiguous unit"),
    ("rate: 100MB/s", "ambiguous unit"), ("runtime: 5d", "unknown unit"),
    ("iodepht: 4", "misspelt key"), ("expect: {read.iopz: '>= 1'}", "unknown metric"),
    ("expect: {read.clat.p999x: '<= 1ms'}", "unknown statistic"),
    ("ioengine: windowsaio", "unknown engine"), ("rw: randomread", "unknown mode"),
    ("iodepth: 0", "below 1"), ("iodepth: 5000", "above the engine's limit"),
    ("numjobs: '32'", "a quoted number"), ("direct: yes", "YAML 1.1 boolean"),
    ("verify: md4", "unknown checksum"), ("rwmixread: 120\n    rw: randrw", "above 100"),
    ("steady_state: {metric: read.iops, window: 1}", "window below 2"),
    ("bssplit: 4k/10:64k/50", None),  # refused by validate only: the shares are cross-checked
]


@pytest.mark.parametrize(("extra", "why"), REFUSED, ids=[r[0] for r in REFUSED])
def test_the_schema_refuses_what_it_can(validator, extra, why):
    doc = suite_with(extra)
    assert not accepted(doc), doc  # validate refuses each
    errors = schema_errors(validator, doc)
    if why is None:
        return  # beyond JSON Schema (the shares of a split); iogate validate says it
    assert errors, f"the schema accepts {extra!r} ({why})"


@pytest.mark.parametrize(("doc", "refused"), [
    ("suite: s\nworkloads:\n  - {name: w, rw: read}\n", True),
    ("suite: s\nworkloads:\n  - {name: w, rw: read, io_size: 1m}\n", True),
    ("suite: s\nworkloads:\n  - {name: w, size: 1m}\n  - {name: v}\n", True),
    ("suite: s\ndefaults: {size: 1m}\nworkloads:\n  - {name: w}\n", False),
    ("suite: s\ndefaults: {filename: /dev/null}\nworkloads:\n  - {name: w}\n", False),
    ("suite: s\nworkloads:\n  - {name: w, filename: /dev/null}\n", False),
    ("suite: s\nworkloads:\n  - {name: w, sweep: {size: [1m, 2m]}}\n", False),
])
def test_a_workload_without_size_or_filename_is_refused(validator, doc, refused):
    assert accepted(doc) is not refused, doc
    assert bool(schema_errors(validator, doc)) is refused, doc


def test_the_malformed_corpus_never_passes_validate_where_the_schema_refuses_more(validator):
    """Every document of the malformed corpus that is YAML at all: validate refuses it (its
    own test says how); the schema may accept some (rules between fields), and must not be
    the only one to refuse anything in the shipped and documented examples (above). Here: the
    schema's verdicts are counted, so that a schema that stopped refusing shows."""
    from tests.unit.test_malformed import CORPUS

    refused = total = 0
    for param in CORPUS:
        bad = param.values[0]
        if isinstance(bad.text, bytes):
            continue
        try:
            data = plain(load_yaml_text(bad.text))
        except SuiteError:
            continue
        total += 1
        refused += bool(list(validator.iter_errors(data)))
    assert total >= 40
    assert refused >= total // 3, (refused, total)


# -- what an editor shows ------------------------------------------------------------------------

def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def completions(schema: dict[str, Any], path: list[str], prefix: str) -> dict[str, str]:
    """The keys an editor offers at ``path`` (workload keys, then into one): those of the
    schema's properties starting with ``prefix``, each with its description."""
    node = resolve(schema, schema)
    for key in path:
        if key == "workloads[]":
            node = resolve(schema, node["properties"]["workloads"]["items"])
            continue
        prop = node["properties"][key]
        options = [resolve(schema, m) for m in prop.get("anyOf", [prop])]
        node = next(o for o in options if "properties" in o)
    return {k: v.get("description", "") for k, v in node["properties"].items()
            if k.startswith(prefix)}


def test_an_editor_completes_metric_names_under_expect():
    schema = json_schema()
    offered = completions(schema, ["workloads[]", "expect"], "read.cl")
    assert "read.clat.p99" in offered
    assert "read.clat.p99.9" in offered
    assert offered["read.clat.p99"].startswith("read.clat.p99, the 99th percentile: ")
    assert "completion" in offered["read.clat.p99"]
    assert "(ns;" in offered["read.clat.p99"]
    assert set(completions(schema, ["workloads[]", "expect"], "")) >= set(standard_paths())


def test_an_editor_completes_workload_keys_with_unit_and_default():
    schema = json_schema()
    keys = completions(schema, ["workloads[]"], "")
    assert {"iodepth", "bssplit", "rate_iops", "verify", "expect", "sweep"} <= set(keys)
    assert all(keys.values()), [k for k, v in keys.items() if not v]
    workload = resolve(schema, schema["properties"]["workloads"]["items"])["properties"]
    assert workload["iodepth"]["default"] == 1
    assert workload["ioengine"]["default"] == "io_uring"
    assert workload["bs"]["default"] == "4KiB"
    assert "bytes" in workload["size"]["description"]
    assert "second" in workload["rate_iops"]["description"]
    steady = schema["$defs"]["SteadyState"]["properties"]
    assert steady["round"]["default"] == "60s"
    assert all(v.get("description") for v in steady.values())


def test_every_scalar_key_takes_a_variable():
    schema = json_schema()
    workload = schema["$defs"]["WorkloadEntry"]["properties"]
    for key in ("numjobs", "iodepth", "rw", "ioengine", "direct", "verify", "size", "bs"):
        assert REFERENCE in workload[key]["anyOf"], key
