"""Cost of verifying every read: BLAKE3 re-hash on the read path vs an unverified read, same files.

Run by hand:  python benchmarks/read_verify.py [--repeat 5]

A local store (a temporary directory) holds objects of the sizes the service reads: call records
(~2 KiB; a calls page reads 100 of them), a report's results object (~100 KiB per 500 rows), and
dataset objects (1 MiB and 16 MiB). For each size it times `get_bytes(verify=False)` and
`get_bytes(verify=True)` over the same objects (the page cache is warm for both: the bytes were just
written) and prints the best of `--repeat` for each, the ratio, and the hash rate. A calls page's
verification cost is also printed in milliseconds (100 call records), beside the 50 ms page goal
of the scale issue.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from srbench.cas import ObjectStore, digest_bytes


def _best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    sizes = [("call record", 2 * 1024, 100), ("results object", 100 * 1024, 20), ("dataset 1 MiB", 1 << 20, 8),
             ("dataset 16 MiB", 16 << 20, 2)]
    with tempfile.TemporaryDirectory() as tmp:
        store = ObjectStore(os.path.join(tmp, "cas"))
        print(f"{'objects':>16} {'n':>4} {'unverified':>11} {'verified':>11} {'ratio':>6} {'hash GB/s':>9}")
        for label, size, n in sizes:
            digests = [store.put_bytes(os.urandom(size), durable=False) for _ in range(n)]
            raw = _best(lambda ds=digests: [store.get_bytes(d, verify=False) for d in ds], args.repeat)
            checked = _best(lambda ds=digests: [store.get_bytes(d, verify=True) for d in ds], args.repeat)
            blob = store.get_bytes(digests[0])
            hash_s = _best(lambda b=blob, k=n: [digest_bytes(b) for _ in range(k)], args.repeat)
            print(f"{label:>16} {n:>4} {raw * 1e3:>9.2f}ms {checked * 1e3:>9.2f}ms {checked / raw:>6.2f} "
                  f"{size * n / hash_s / 1e9:>9.2f}")
            if label == "call record":
                print(f"  a calls page (100 call records): verification adds {(checked - raw) * 1e3:.2f} ms "
                      "(page goal of the scale issue: p95 <= 50 ms)")


if __name__ == "__main__":
    main()
