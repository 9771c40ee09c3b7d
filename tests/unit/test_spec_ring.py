"""The suite keys of io_uring's fast paths: fixedbufs, registerfiles, sqthread_poll,
sqthread_poll_cpu and hipri; the rules between them and the engine, and what they lower to."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.lower import lower
from iogate.spec import load_suite


def load(tmp_path: Path, body: str):
    f = tmp_path / "s.suite.yaml"
    f.write_text("suite: s\nworkloads:\n  - name: w\n    size: 1MiB\n"
                 + textwrap.indent(textwrap.dedent(body), "    "))
    return load_suite(f, env={})


def spec_of(tmp_path: Path, body: str):
    return lower(load(tmp_path, body).cases[0].workload, filenames=["/var/tmp/x"], seed=1)


def test_by_default_files_are_registered_and_nothing_else(tmp_path):
    spec = spec_of(tmp_path, "ioengine: io_uring\n")
    assert (spec.fixedbufs, spec.registerfiles, spec.sqpoll, spec.sqpoll_cpu, spec.hipri) \
        == (False, True, False, None, False)


def test_each_key_lowers_to_its_own_setting(tmp_path):
    spec = spec_of(tmp_path, """\
        ioengine: io_uring
        direct: true
        fixedbufs: true
        registerfiles: false
        sqthread_poll: true
        sqthread_poll_cpu: 1
        hipri: true
        """)
    assert (spec.fixedbufs, spec.registerfiles, spec.sqpoll, spec.sqpoll_cpu, spec.hipri) \
        == (True, False, True, 1, True)


@pytest.mark.parametrize(("body", "said"), [
    ("ioengine: libaio\nfixedbufs: true\n",
     "fixedbufs is an option of io_uring; libaio takes none of fixedbufs"),
    ("ioengine: psync\nregisterfiles: false\n", "registerfiles is an option of io_uring"),
    ("ioengine: null\nsqthread_poll: true\n", "sqthread_poll is an option of io_uring"),
    ("ioengine: io_uring\nsqthread_poll_cpu: 0\n", "set sqthread_poll: true"),
    ("ioengine: io_uring\nhipri: true\n", "hipri polls for completions of direct I/O only"),
    ("ioengine: io_uring\nsqthread_poll: true\nsqthread_poll_cpu: 1024\n",
     "sqthread_poll_cpu"),
])
def test_what_cannot_apply_is_refused_naming_the_key(tmp_path, body, said):
    with pytest.raises(SuiteError) as caught:
        load(tmp_path, body)
    assert said in str(caught.value)
