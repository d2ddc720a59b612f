"""Compare the onnx (int8 and float32) and torch backends in one process, interleaved, through
the plugin API.

    python plugins/embeddings/scripts/compare_backends.py [--rounds 40] [--threads N]
        [--onnx-cache-dir DIR]

The embedders share one loaded model; each round runs 10 short queries (`embed_query`) and
one batch of 32 texts (`embed`) on each in turn, so background load on a shared machine hits all
alike. Prints query p50/p95 and batch texts/s, plus each one's lowest cosine to torch.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

TEXTS = [
    f"The user mentioned that project {i} uses PostgreSQL, deploys on Fridays are frozen, "
    f"and they prefer concise answers with code examples." for i in range(320)
]


async def run(args: argparse.Namespace) -> None:
    from recall_embeddings import DenseSettings, SentenceTransformerEmbedder
    from recall_embeddings.embedder import load_sentence_transformer

    extra = {"threads": args.threads}
    if args.onnx_cache_dir:
        extra["onnx_cache_dir"] = args.onnx_cache_dir
    model = load_sentence_transformer(DenseSettings(**extra))
    variants = {"int8": {"backend": "onnx", "quantize": "int8"},
                "onnx": {"backend": "onnx", "quantize": "none"}, "torch": {"backend": "torch"}}
    embedders = {name: SentenceTransformerEmbedder(DenseSettings(**v, **extra), loader=lambda s: model)
                 for name, v in variants.items()}
    for emb in embedders.values():
        if not emb.wait_ready(300):
            sys.exit(f"load failed: {emb.status()}")
    for name in ("int8", "onnx"):
        status = embedders[name].status()
        print(f"{name} file {status['onnx_file']} (export: {status['onnx_export_seconds']} s; "
              f"None = cached; quantize {status['quantize']})")

    want = await embedders["torch"].embed(TEXTS[:32])
    for name in ("int8", "onnx"):
        got = await embedders[name].embed(TEXTS[:32])
        low = min(sum(x * y for x, y in zip(u, v)) for u, v in zip(got, want))
        print(f"lowest cosine {name} vs torch over 32 texts: {low:.6f}")

    query: dict[str, list[float]] = {k: [] for k in embedders}
    rate: dict[str, list[float]] = {k: [] for k in embedders}
    for rnd in range(args.rounds):
        chunk = TEXTS[(rnd % 10) * 32:(rnd % 10) * 32 + 32]
        for name, emb in embedders.items():
            for j in range(10):
                s = time.perf_counter()
                await emb.embed_query(f"what database does project {j} use?")
                query[name].append((time.perf_counter() - s) * 1000)
            s = time.perf_counter()
            await emb.embed(chunk)
            rate[name].append(32 / (time.perf_counter() - s))
    for name in embedders:
        q = sorted(query[name])
        print(f"{name:5s} threads={args.threads}: query p50 {statistics.median(q):.2f} ms, "
              f"p95 {q[int(len(q) * 0.95)]:.2f} ms | batch of 32: median "
              f"{statistics.median(rate[name]):.0f} texts/s, best {max(rate[name]):.0f}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--onnx-cache-dir", default=None)
    asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    main()
