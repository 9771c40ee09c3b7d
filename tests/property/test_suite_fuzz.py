"""Fuzzing the suite loader: generated documents, mutated bytes and alias bombs each load or
end in a SuiteError (never another exception), in bounded memory. How long a refusal takes
is measured in bench/malformed_load.py, not asserted here (a busy machine is slow)."""

from __future__ import annotations

import tempfile
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iogate.errors import SuiteError
from iogate.spec import load_suite
from iogate.spec.models import Workload

SUITES = Path(__file__).resolve().parents[2] / "suites"
ENV = {"SIZE": "1m", "BS": "4k", "QD": "8", "EMPTY": "", "REF": "${SIZE}", "NUL": "a\0b",
       "LONG": "x" * 5000, "NUM": "9" * 200}
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Problems about the file as a whole rather than a place in it.
WHOLE_FILE = ("the file is empty", "the file has", "the file is larger")


@contextmanager
def suite_file(data: bytes) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.suite.yaml"
        path.write_bytes(data)
        yield path


def check_loads_or_refuses(data: bytes) -> None:
    with suite_file(data) as path:
        try:
            load_suite(path, env=ENV)
        except SuiteError as exc:  # anything else fails the test
            assert exc.problems
            for p in exc.problems:
                assert p.file == str(path)
                assert p.message
                # Messages quote what was written, escaped: no raw control characters.
                assert p.message.isprintable(), repr(p.message)
                if p.line == 0:
                    assert p.message.startswith(WHOLE_FILE), str(p)
            assert len(str(exc)) < 100_000


# -- generated documents ------------------------------------------------------------------

KEYS = [*sorted(Workload.model_fields), "sweep", "precondition", "loops", "<<"]
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
VARIABLE = st.sampled_from(["${SIZE}", "${BS:-8k}", "$QD", "${UNSET}", "${UNSET:-${BS}}",
                            "${EMPTY:?}", "${REF}", "${NUL}", "${LONG}", "${NUM}", "${", "$",
                            "$$", "${A:-${B:-${C:-1}}}", "${X!}", "${}", "${ncpus}"])
UNIT = st.sampled_from(["4k", "4KiB", "1m", "1g", "512", "30s", "1ms", "2h", "100us",
                        "4k,8k", "4k/50:8k/50", "1k-64k", "10%", "1e3", "0x10", "-1", ".inf"])
WORD = st.sampled_from(["read", "write", "randread", "randwrite", "rw", "randrw", "io_uring",
                        "psync", "null", "libaio", "true", "false", "zipf:1.2", "<= 1ms",
                        ">= 10k", "== 0", "read.iops", "errors", "on", "~", "", "0777",
                        "crc32c", "xxhash", "md5", "none", ">= 1 in 99% of 500ms",
                        "<= 1ms in all"])
SCALARS = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40), st.floats(allow_nan=True),
    st.booleans(), st.none(), TEXT, VARIABLE, UNIT, WORD,
    st.builds(lambda a, b: f"{a}{b}", UNIT, VARIABLE),
    st.builds(lambda a, b: f"{a} * {b}", VARIABLE, st.integers(0, 64)))
KEY = st.one_of(st.sampled_from(KEYS), TEXT)


def values(leaves: st.SearchStrategy) -> st.SearchStrategy:
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(KEY, inner, max_size=5)), max_leaves=12)


WORKLOAD = st.dictionaries(KEY, values(SCALARS), max_size=8)
EXPECT = st.dictionaries(st.sampled_from(["read.iops", "read.clat.p99", "errors", "write.bw",
                                          "total.lat.p99.9", "mix.read"]) | TEXT,
                         st.one_of(WORD, VARIABLE, st.lists(WORD, max_size=3)), max_size=4)


@st.composite
def suites(draw: st.DrawFn) -> object:
    workloads = draw(st.lists(WORKLOAD, max_size=4))
    for w in workloads:
        if draw(st.booleans()):
            w["expect"] = draw(EXPECT)
        if draw(st.booleans()):
            w.setdefault("name", draw(st.sampled_from(["a", "b", "a", "${BS}"])))
    if workloads and draw(st.booleans()):  # share one object: the dump writes an anchor
        workloads.append(workloads[0])
    doc: dict = {"suite": draw(st.one_of(st.just("s"), SCALARS)),
                 "workloads": workloads}
    if draw(st.booleans()):
        doc["defaults"] = draw(WORKLOAD)
    if draw(st.booleans()):
        return draw(values(SCALARS))  # not a suite at all
    return doc


@settings(FUZZ, max_examples=150)
@given(suites())
def test_generated_documents(doc):
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    check_loads_or_refuses(text.encode("utf-8"))


# -- mutated valid suites -----------------------------------------------------------------

SEEDS = [p.read_bytes() for p in sorted(SUITES.glob("*.suite.yaml"))] + [
    b"suite: s\ndefaults: &d\n  size: 1m\n  rw: randread\nworkloads:\n"
    b"  - name: a\n    <<: *d\n    bs: 4k\n    iodepth: ${QD}\n"
    b"    expect:\n      read.iops: '>= 1k'\n"
    b"  - {name: b, rw: randrw, rwmixread: 70, size: ${SIZE}, sweep: {bs: [4k, 8k]}}\n"]
SNIPPETS = [b"!!python/object/apply:os.system [x]", b"!!binary aGk=", b"!t ", b"&a ", b"*a",
            b"<<: *a", b"${", b"${UNSET}", b"${LONG}", b"\x00", b"\xff", b"\xef\xbb\xbf", b"\t",
            b"[", b"]", b"{", b"}", b": ", b"- ", b"'", b'"', b"#", b"%TAG ! x\n", b"---\n",
            b"? ", b"|\n", b">\n", b"\\", b"9" * 400, b"1e400", b"\r", b"\n  ", b"&b [*b]"]


@st.composite
def mutations(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["insert", "delete", "replace", "line"]))
        if kind == "insert":
            data[at:at] = draw(st.sampled_from(SNIPPETS) | st.binary(min_size=1, max_size=4))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif kind == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        else:  # repeat or drop a whole line: duplicate keys, broken indentation
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines[i:i + 1] = [lines[i]] * draw(st.integers(0, 3))
            data = bytearray(b"\n".join(lines))
    return bytes(data)


@settings(FUZZ, max_examples=250)
@given(mutations())
def test_mutated_suites(data):
    check_loads_or_refuses(data)


# -- alias bombs --------------------------------------------------------------------------

@st.composite
def alias_bombs(draw: st.DrawFn) -> bytes:
    levels, fanout = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    as_mapping = draw(st.booleans())
    lines = ["suite: s", "l0: &l0 [" + ", ".join(["lol"] * draw(st.integers(1, 50))) + "]"]
    for i in range(1, levels + 1):
        if as_mapping:  # merges and values
            items = [f"<<: *l{i - 1}"] if i > 1 else []
            items += [f"k{j}: *l{i - 1}" for j in range(fanout)]
            lines.append(f"l{i}: &l{i} {{" + ", ".join(items) + "}")
        else:
            lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * fanout) + "]")
    where = draw(st.sampled_from(["top", "workload"]))
    tail = (f"workloads:\n  - name: a\n    rw: randread\n    size: 1m\n    x: *l{levels}\n"
            if where == "workload" else "workloads: []\n")
    return ("\n".join(lines) + "\n" + tail).encode()


@settings(FUZZ, max_examples=40)
@given(alias_bombs())
def test_alias_bombs_stay_small(data):
    tracemalloc.start()
    try:
        check_loads_or_refuses(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 << 20, f"peak {peak >> 20} MiB"

