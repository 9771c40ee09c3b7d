"""The suite keys of NUMA placement: numa_cpu_nodes and numa_mem_policy; their values, the
rule between them and cpus_allowed, and what they lower to."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.unit.test_spec_ring import load, spec_of

from iogate.errors import SuiteError
from iogate.spec.fields import numa_mem_policy


@pytest.mark.parametrize(("body", "cpu_nodes", "policy", "mem_nodes"), [
    ("rw: read\n", (), "none", ()),
    ("numa_cpu_nodes: 0-2,5\n", (0, 1, 2, 5), "none", ()),
    ("numa_cpu_nodes: 1\nnuma_mem_policy: local\n", (1,), "local", ()),
    ("numa_mem_policy: bind:0-1\n", (), "bind", (0, 1)),
    ("numa_mem_policy: interleave:0,3\n", (), "interleave", (0, 3)),
    ("numa_mem_policy: prefer:2\n", (), "prefer", (2,)),
    ("numa_mem_policy: default\n", (), "default", ()),
])
def test_the_keys_lower_to_nodes_and_a_mode(tmp_path, body, cpu_nodes, policy, mem_nodes):
    spec = spec_of(tmp_path, body)
    assert (spec.numa_cpu_nodes, spec.numa_mem_policy, spec.numa_mem_nodes) \
        == (cpu_nodes, policy, mem_nodes)


@pytest.mark.parametrize(("body", "said"), [
    ("numa_cpu_nodes: 0\ncpus_allowed: 0\n", "numa_cpu_nodes and cpus_allowed both place"),
    ("numa_cpu_nodes: 64\n", "nodes are 0 to 63"),
    ("numa_cpu_nodes: 1-0\n", "a range low to high"),
    ("numa_mem_policy: prefer:0-1\n", "prefer takes one node"),
    ("numa_mem_policy: bind\n", "bind takes nodes"),
    ("numa_mem_policy: local:0\n", "local takes no nodes"),
    ("numa_mem_policy: spread:0\n", "the policy is default, local, prefer, bind or interleave"),
])
def test_what_cannot_apply_is_refused_naming_the_key(tmp_path, body, said):
    with pytest.raises(SuiteError) as caught:
        load(tmp_path, body)
    assert said in str(caught.value)


@given(st.sampled_from(["bind", "interleave"]),
       st.lists(st.integers(0, 63), min_size=1, max_size=8))
def test_a_written_policy_reads_back(mode, nodes):
    text = f"{mode}:{','.join(str(n) for n in nodes)}"
    assert numa_mem_policy(text) == (mode, tuple(sorted(set(nodes))))
