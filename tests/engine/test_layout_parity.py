"""The ctypes bindings agree with the library on struct layouts and histogram geometry: the
structs written in the bindings are checked against the library's description at load, and the
job spec is built from it."""

from __future__ import annotations

import errno

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iogate import histogram
from iogate.engine import limits, native
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


def test_the_job_spec_is_the_library_s_own_description():
    lib_size, lib_fields = native.layout_report()["iog_job_spec"]
    py_size, py_fields = native.binding_layout(native.job_spec_type())
    assert list(py_fields) == list(lib_fields)  # every member, in the header's order
    assert py_fields == lib_fields
    assert py_size == lib_size
    spec = native.job_spec_type()()
    assert len(spec.bs) == native.DATA_DIRS
    assert len(spec.bs[0]) == limits.BS_ENTRIES_MAX
    assert isinstance(spec.bs[0][0], native.IogBsEntry)
    assert type(spec).filename.size == limits.PATH_MAX  # a char array reads as its bytes


_WIDE_ZONE = type("iog_zone", (native.ctypes.Structure,),
                  {"_fields_": [("access", native.c_uint64), ("size", native.c_uint32)]})


def test_a_binding_whose_layout_differs_refuses_the_library(monkeypatch):
    monkeypatch.setitem(native.STRUCTS, "iog_zone", _WIDE_ZONE)
    path = native.library_path()
    with pytest.raises(native.LibraryError) as exc:
        native.open_library(path)
    assert ("struct iog_zone is 8 bytes in the library, 16 here (members that differ: "
            "access, size)") in str(exc.value)


def test_a_member_of_a_type_the_bindings_do_not_know_is_named():
    size, members = native.described(native.lib(), "iog_job_spec")
    members[0].type = b"long double"
    with pytest.raises(ValueError, match=r"iog_job_spec\.struct_size is a long double, a type "
                                         "these bindings do not know"):
        native.built_struct("iog_job_spec", size, members)


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
