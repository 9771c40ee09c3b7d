"""iogate_plots: the first-party report plugin (``--artifacts DIR`` and ``--html FILE``), which
also draws the trend of a history store's metric (``iogate history --metric M --png/--html``).

It is registered through the ``iogate`` entry-point group like any other plugin; what it
writes is described in :mod:`iogate_plots.plugin`.
"""
