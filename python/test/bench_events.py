# Copyright (C) 2026 The ringtrace authors.
"""bench_events.py [SOCKET]: the Python package's per-event cost.

Without SOCKET: the disabled category only (no service needed). With it:
connects, waits for a session that enables the category "py.bench", and
times each kind of event while it records (run it under a session, e.g.
`ringtrace -t 20s -o /tmp/py.pftrace py.bench`). Prints ns per call, the
best of 5 runs of N calls each (N = $BENCH_N, default 200000).
"""

import os
import sys
import time

import ringtrace


def best_ns(body, n):
    best = None
    for _ in range(5):
        start = time.perf_counter_ns()
        body(n)
        elapsed = (time.perf_counter_ns() - start) / n
        best = elapsed if best is None else min(best, elapsed)
    return best


def empty_loop(n):
    for i in range(n):
        pass


def disabled_slice(n):
    for i in range(n):
        with ringtrace.slice("py.bench.off", "Slice", i=i):
            pass


def slice_pair(n):
    for i in range(n):
        with ringtrace.slice("py.bench", "Slice", i=i):
            pass


def slice_pair_no_args(n):
    for i in range(n):
        with ringtrace.slice("py.bench", "Slice"):
            pass


def counter(n):
    for i in range(n):
        ringtrace.counter("py.bench", "count", i)


def instant(n):
    for i in range(n):
        ringtrace.instant("py.bench", "Instant", i=i)


def main():
    n = int(os.environ.get("BENCH_N", "200000"))
    ringtrace.register_category("py.bench")
    ringtrace.register_category("py.bench.off")
    results = [("empty loop (baseline)", best_ns(empty_loop, n)),
               ("disabled slice (with, 1 int arg)", best_ns(disabled_slice,
                                                            n))]
    if len(sys.argv) > 1:
        ringtrace.init(socket=sys.argv[1], name="py_bench", wait_ms=10000)
        deadline = time.monotonic() + 30
        while not ringtrace.is_enabled("py.bench"):
            if time.monotonic() > deadline:
                print("bench_events: no session enabled py.bench")
                return 3
            time.sleep(0.001)
        results += [
            ("slice pair (with, 1 int arg)", best_ns(slice_pair, n)),
            ("slice pair (with, no arg)", best_ns(slice_pair_no_args, n)),
            ("instant (1 int arg)", best_ns(instant, n)),
            ("counter (int)", best_ns(counter, n)),
        ]
        ringtrace.shutdown()
    for label, ns in results:
        print("%-36s %8.0f ns" % (label, ns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
