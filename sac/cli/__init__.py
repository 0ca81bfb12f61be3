"""The command line (``sac``): thin commands that parse flags, call one use case and print.

A SacError exits 1 with one line."""
