"""iogate.jsontext writes exactly what json.dumps(indent=2) writes, errors included."""

from __future__ import annotations

import enum
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iogate import jsontext


class Level(enum.IntEnum):
    LOW = 1


class Text(str):
    pass


class Number(float):
    pass


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([Level.LOW, Text("sub\u00e9"), Number(2.5), -0.0, math.inf]),
)
keys = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none())
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner), st.lists(inner).map(tuple),
                            st.dictionaries(keys, inner)),
    max_leaves=60,
)


@given(documents)
def test_the_same_text_as_the_standard_library(doc: object) -> None:
    expected = json.dumps(doc, indent=2)
    assert jsontext.dumps(doc) == expected
    assert "".join(jsontext.iterencode(doc)) == expected


@given(st.dictionaries(st.text(max_size=8), st.lists(
    st.dictionaries(st.text(max_size=8), st.one_of(scalars, st.lists(scalars, max_size=3)),
                    max_size=4), max_size=4), max_size=4))
def test_streamed_levels_join_to_the_same_text(doc: dict[str, object]) -> None:
    assert "".join(jsontext.iterencode(doc)) == json.dumps(doc, indent=2)


class Rows(list):  # type: ignore[type-arg]
    """A list that holds nothing and makes its items when iterated (as journal cases do)."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        yield {"id": 1, "values": [1.5, None]}
        yield {"id": 2, "values": []}

    def __bool__(self) -> bool:
        return True


def test_a_lazy_list_is_iterated_like_the_standard_library_does() -> None:
    doc = {"cases": Rows(), "summary": {}}
    assert jsontext.dumps(doc) == json.dumps(doc, indent=2)


@pytest.mark.parametrize("doc", [
    {"a": object()},
    [1, {2j: 1}],
    {"deep": [[{"x": {1, 2}}]]},
])
def test_what_json_cannot_hold_is_a_type_error(doc: object) -> None:
    with pytest.raises(TypeError) as ours:
        jsontext.dumps(doc)
    with pytest.raises(TypeError) as theirs:
        json.dumps(doc, indent=2)
    assert str(ours.value) == str(theirs.value)


def test_a_cycle_is_refused() -> None:
    shallow: list[object] = []
    shallow.append(shallow)
    deep: dict[str, object] = {"a": [{"b": []}]}
    deep["a"][0]["b"].append(deep)  # type: ignore[index]
    for doc in (shallow, deep):
        with pytest.raises(ValueError, match="Circular reference detected"):
            jsontext.dumps(doc)
