"""iogate_sysinfo: the first-party plugin that describes the machine and the target device.

It is registered through the ``iogate`` entry-point group like any other plugin; the facts it
reports are documented in :mod:`iogate_sysinfo.plugin`.
"""
