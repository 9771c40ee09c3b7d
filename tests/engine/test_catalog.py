"""The engine catalog is the library's own list (iog_engine_describe): names, summaries,
depths and whether an engine does I/O, in the library's order."""

from __future__ import annotations

import errno

import pytest

from iogate.engine import catalog, native
from iogate.engine.session import job_struct
from iogate.errors import EngineError
from iogate.job import JobSpec


def test_the_catalog_is_what_the_library_describes():
    infos = native.engine_infos()
    assert [e.name for e in catalog.engines()] == [i.name.decode() for i in infos]
    for e, i in zip(catalog.engines(), infos, strict=True):
        assert e.summary == i.summary.decode()
        assert e.summary
        assert e.max_depth == i.max_depth
        assert e.does_io == bool(i.flags & native.ENGINE_DOES_IO)


def test_known_engines_in_order():
    known = [n for n in catalog.names() if n in ("io_uring", "libaio", "psync", "sync")]
    assert known == ["io_uring", "libaio", "psync", "sync"]
    assert catalog.names()[-1] == "null"
    assert catalog.get("psync").max_depth == 1
    assert not catalog.get("psync").queued
    assert catalog.get("io_uring").queued
    assert not catalog.get("null").does_io
    assert catalog.get("spdk") is None
    assert catalog.spoken().endswith(" or null")


def test_an_unknown_engine_is_refused_naming_the_known_ones():
    with pytest.raises(EngineError) as exc:
        job_struct(JobSpec(size=4096, engine="spdk", filename="/nonexistent"))
    assert exc.value.errno == errno.EINVAL
    assert "unknown engine 'spdk'" in str(exc.value)
    assert ", ".join(catalog.names()) in str(exc.value)
