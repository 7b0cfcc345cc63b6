"""The benchmarks: load generators, a bare relay to compare with, and a server wrapper.

Every server a benchmark starts inherits this process's environment without
PYTHONDONTWRITEBYTECODE, as `make` runs everything (Makefile): with it, each server started
compiles every module again, and a restart measured on this machine took 4.8 s to answer
instead of 1.9 s.
"""

import os

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
