"""The ctypes bindings agree with the library on struct layouts and histogram geometry."""

from __future__ import annotations

import errno

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iogate import histogram
from iogate.engine import native
from iogate.errors import EngineError


def test_library_loads_with_the_expected_abi():
    assert native.abi_version() == native.ABI_VERSION
    assert native.version()


@pytest.mark.parametrize("name", sorted(native.STRUCTS))
def test_struct_layout_matches_library(name):
    lib_size, lib_fields = native.layout_report()[name]
    py_size, py_fields = native.binding_layout(native.STRUCTS[name])
    assert set(py_fields) == set(lib_fields)
    assert py_fields == lib_fields
    assert py_size == lib_size


def test_unknown_struct_is_enoent():
    size = native.c_uint32()
    fields = native.POINTER(native.IogLayoutField)()
    with pytest.raises(EngineError) as exc:
        native.lib().iog_describe_struct(b"no_such_struct", native.byref(size),
                                         native.byref(fields))
    assert exc.value.errno == errno.ENOENT


def test_geometry_constants_agree():
    # The last bucket is the overflow bucket in both, so the bucket counts agree; the first
    # value past the linear range and the top start new buckets in both.
    assert native.hist_index(histogram.LINEAR) == histogram.LINEAR
    assert native.hist_index(histogram.TOP_NS) == histogram.OVERFLOW
    assert native.hist_index(histogram.TOP_NS - 1) == histogram.OVERFLOW - 1
    assert native.hist_index(2**64 - 1) == histogram.OVERFLOW
    assert native.hist_bounds(histogram.OVERFLOW) == histogram.bucket_bounds(histogram.OVERFLOW)


values = st.one_of(st.integers(0, 1024), st.integers(0, 2**41), st.integers(0, 2**64 - 1))


@given(values)
def test_python_bucket_index_matches_library(v):
    assert histogram.bucket_index(v) == native.hist_index(v)


@given(st.integers(0, histogram.BUCKETS - 1))
def test_python_bucket_bounds_match_library(i):
    assert histogram.bucket_bounds(i) == native.hist_bounds(i)


def test_bounds_of_bad_index_is_an_error():
    with pytest.raises(EngineError):
        native.hist_bounds(histogram.BUCKETS)
