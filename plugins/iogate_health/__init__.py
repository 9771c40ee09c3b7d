"""iogate_health: the first-party plugin that reads the target device's health (SMART / NVMe
health log) before and after each case and reports it as ``health.*`` metrics.

It is registered through the ``iogate`` entry-point group like any other plugin; the metrics
are declared in :mod:`iogate_health.plugin`, the tools' formats read in
:mod:`iogate_health.parse`.
"""
