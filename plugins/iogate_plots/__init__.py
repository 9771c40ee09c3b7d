"""iogate_plots: the first-party report plugin (``--artifacts DIR`` and ``--html FILE``).

It is registered through the ``iogate`` entry-point group like any other plugin; what it
writes is described in :mod:`iogate_plots.plugin`.
"""
