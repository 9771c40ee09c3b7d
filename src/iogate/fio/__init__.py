"""fio interoperability: job files in and out, and fio as a backend."""
