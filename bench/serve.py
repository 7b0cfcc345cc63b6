"""Runs the app exactly as `python -m app` does, with bench/gcwatch.py's pause timing and
bench/savewatch.py's timing of the saving beats on.

    BENCH_GC_FILE=/tmp/gc.json python -m bench.serve

Opt-in experiments, outside app/ (they change nothing unless set):
BENCH_GC_THRESHOLD="700,10,1000" sets gc.set_threshold (bench/gcwatch.py);
BENCH_GC_FREEZE=1 moves everything alive after the app's start-up into the permanent
generation (gc.freeze), so full collections no longer walk it; BENCH_ABLATE=name,...
switches those overrides of the transport off (bench/ablate.py).
"""

import gc
import os

from bench import gcwatch, savewatch

if __name__ == "__main__":
    gcwatch.install(saving=savewatch.install())
    if os.environ.get("BENCH_ABLATE"):
        from bench import ablate

        ablate.apply(os.environ["BENCH_ABLATE"])
    if os.environ.get("BENCH_GC_FREEZE"):
        import app.main  # noqa: F401  # the app, built: what start-up leaves alive

        gc.collect()
        gc.freeze()
    from app.__main__ import main

    main()
