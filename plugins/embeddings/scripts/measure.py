"""Measure the dense embedder on this machine: load time and ms per text (single, batched).

    python plugins/embeddings/scripts/measure.py [--threads N] [--model NAME_OR_PATH]
        [--backend auto|onnx|torch] [--onnx-cache-dir DIR]

Numbers go into the README. Runs through the real plugin API (make_dense -> embed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time

TEXTS = [
    f"The user mentioned that project {i} uses PostgreSQL, deploys on Fridays are frozen, "
    f"and they prefer concise answers with code examples." for i in range(256)
]


def rss_mb() -> float:
    """Resident set size of this process (Linux /proc; ru_maxrss, the peak, elsewhere)."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def run(args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    from recall_embeddings import make_dense

    settings = {"model": args.model, "batch_size": 64, "backend": args.backend}
    if args.threads:
        settings["threads"] = args.threads
    if args.onnx_cache_dir:
        settings["onnx_cache_dir"] = args.onnx_cache_dir
    ranker = make_dense(settings)
    returned = time.perf_counter() - t0
    if not ranker.embedder.wait_ready(300):
        sys.exit(f"load failed: {ranker.embedder.status()}")
    total = time.perf_counter() - t0
    emb = ranker.embedder
    print(f"factory returned after {returned * 1000:.1f} ms; ready after {total:.2f} s "
          f"(cold process: torch import + model load)")
    status = emb.status()
    print(f"backend: {status['backend']} ({status['backend_reason'] or status['onnx_file']}); "
          f"onnx export: {status['onnx_export_seconds']} s (None: cached or torch)")

    import torch
    print(f"torch threads: {torch.get_num_threads()}, cpus: {os.cpu_count()}")
    await emb.embed(TEXTS[:8])  # warm-up

    single = []
    for text in TEXTS[:64]:
        s = time.perf_counter()
        await emb.embed_query(text)
        single.append((time.perf_counter() - s) * 1000)
    print(f"single text (~30 tokens): median {statistics.median(single):.1f} ms, "
          f"p95 {sorted(single)[int(len(single) * 0.95)]:.1f} ms")

    short = []
    for i in range(64):
        s = time.perf_counter()
        await emb.embed_query(f"what database does project {i} use?")
        short.append((time.perf_counter() - s) * 1000)
    print(f"short query (~10 tokens): median {statistics.median(short):.1f} ms")

    per_text = []
    for i in range(4):
        s = time.perf_counter()
        await emb.embed(TEXTS[i * 64:(i + 1) * 64])
        per_text.append((time.perf_counter() - s) * 1000 / 64)
    print(f"batch of 64: median {statistics.median(per_text):.2f} ms/text "
          f"({statistics.median(per_text) * 64:.0f} ms per batch)")

    rates = []
    for i in range(8):
        chunk = TEXTS[(i * 32) % 256:(i * 32) % 256 + 32]
        s = time.perf_counter()
        await emb.embed(chunk)
        rates.append(32 / (time.perf_counter() - s))
    print(f"batch of 32: median {statistics.median(rates):.0f} texts/s")
    print(f"process RSS: {rss_mb():.0f} MB")

    # reload in the same process (torch already imported): the model load alone
    s = time.perf_counter()
    again = make_dense(settings).embedder
    again.wait_ready(120)
    print(f"model load with torch already imported: {(time.perf_counter() - s):.2f} s")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--model", default="all-MiniLM-L6-v2")
    p.add_argument("--backend", default="auto", choices=["auto", "onnx", "torch"])
    p.add_argument("--onnx-cache-dir", default=None)
    asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    main()
