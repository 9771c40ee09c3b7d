"""The native I/O engine: bindings to libiogate (native), its engines (catalog), one run in
this process (session) and runs in an engine process (isolated, forkserver).

Each part is imported on its own; nothing is loaded by importing the package, so that the
low-level bindings can be used (by the histogram among others) without the run loop.
"""
