"""iogate's own tests. A package so that shared test tools import as tests.<name>."""
