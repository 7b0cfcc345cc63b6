"""Runs the app exactly as `python -m app` does, with bench/gcwatch.py's pause timing on.

BENCH_GC_FILE=/tmp/gc.json python -m bench.serve
"""

from bench import gcwatch

if __name__ == "__main__":
    gcwatch.install()
    from app.__main__ import main

    main()
