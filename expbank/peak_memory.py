"""The peak memory of a whole process tree, sampled: what a laptop has to hold for a stage.

``ru_maxrss`` reports the largest single process, but a run is a tree (environment workers, torch threads'
allocations in the main process, a served model), so this samples the summed resident set size of a root
process and all its descendants in a background thread. Summed RSS counts pages shared between processes
once per process, so the figure is an upper bound.
"""

from __future__ import annotations

import os
import threading

import psutil


def tree_rss(root: psutil.Process) -> int:
    """Summed RSS of ``root`` and its descendants (processes that exit while being read are skipped)."""
    total = 0
    for process in [root, *root.children(recursive=True)]:
        try:
            total += process.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


class PeakMemory:
    """A context manager recording the highest summed RSS of a process tree, every ``interval_s`` seconds.

    ``PeakMemory()`` watches this process and its children; :meth:`watch` switches to another root (a
    child started inside the block).
    """

    def __init__(self, interval_s: float = 0.05):
        self.interval_s = interval_s
        self.peak_bytes = 0
        self._root = psutil.Process(os.getpid())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def watch(self, pid: int) -> None:
        self._root = psutil.Process(pid)

    def _sample(self) -> None:
        while True:
            try:
                self.peak_bytes = max(self.peak_bytes, tree_rss(self._root))
            except psutil.NoSuchProcess:
                pass
            if self._stop.wait(self.interval_s):
                return

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_gib(self) -> float:
        return self.peak_bytes / 2**30

