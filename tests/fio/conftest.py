"""Fixtures of the fio tests: a fleet of real fio servers on loopback ports."""

from tests.fio.fleet import fleet  # noqa: F401 - a fixture, offered to every test here
