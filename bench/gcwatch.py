"""Times every garbage-collector pause of the process it runs in (`gc.callbacks`).

Installed by bench/serve.py and bench/relay.py, outside app/: the app itself is not changed
for the benchmark. On SIGUSR1 the pauses since the last signal are written as JSON to the
file named by BENCH_GC_FILE and the counts start again, so the load generator can ask for
one step's pauses at a time.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import signal
import time
from collections.abc import Callable
from typing import Any


class Pauses:
    def __init__(self) -> None:
        self.reset()
        self._began = self._began_cpu = 0.0
        self.dumps = 0

    def reset(self) -> None:
        self.count = [0, 0, 0]
        self.total = [0.0, 0.0, 0.0]
        self.longest = [0.0, 0.0, 0.0]
        self.longest_cpu = [0.0, 0.0, 0.0]

    def callback(self, phase: str, info: dict[str, Any]) -> None:
        # Wall time is the stall the players feel; CPU time is the collector's own work
        # (on a shared machine the wall time also holds whatever ran on the core meanwhile).
        generation = info["generation"]
        if phase == "start":
            self._began = time.perf_counter()
            self._began_cpu = time.thread_time()
            return
        took = time.perf_counter() - self._began
        took_cpu = time.thread_time() - self._began_cpu
        self.count[generation] += 1
        self.total[generation] += took
        self.longest[generation] = max(self.longest[generation], took)
        self.longest_cpu[generation] = max(self.longest_cpu[generation], took_cpu)

    def report(self) -> dict[str, Any]:
        self.dumps += 1
        return {
            "dump": self.dumps,
            "count": self.count,
            "total_ms": [round(t * 1000, 3) for t in self.total],
            "max_ms": [round(t * 1000, 3) for t in self.longest],
            "max_cpu_ms": [round(t * 1000, 3) for t in self.longest_cpu],
        }


def install(saving: Callable[[], dict[str, Any]] | None = None) -> None:
    """Start timing pauses; answer SIGUSR1 if BENCH_GC_FILE is set; apply the thresholds in
    BENCH_GC_THRESHOLD ("700,10,10"), if set. Also lifts the open-file limit to its hard
    maximum: the benchmark holds thousands of connections. `saving` (bench/savewatch.py,
    the app's): its report goes in each dump too, under "saving"."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    thresholds = os.environ.get("BENCH_GC_THRESHOLD")
    if thresholds:
        gc.set_threshold(*(int(part) for part in thresholds.split(",")))
    path = os.environ.get("BENCH_GC_FILE")
    if not path:
        return
    pauses = Pauses()
    gc.callbacks.append(pauses.callback)

    def dump(signum: int, frame: object) -> None:
        report = pauses.report()
        pauses.reset()
        if saving is not None:
            report["saving"] = saving()
        temporary = f"{path}.tmp"
        with open(temporary, "w") as out:
            json.dump(report, out)
        os.replace(temporary, path)  # the reader never sees half a file

    signal.signal(signal.SIGUSR1, dump)
