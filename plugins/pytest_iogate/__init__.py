"""pytest adapter for iogate: every workload of a ``*.suite.yaml`` is a test item."""
