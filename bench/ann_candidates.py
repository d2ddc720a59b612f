"""Approximate nearest-neighbour libraries side by side: build time, query p50, recall@10
(and @50) against exact cosine, and memory, at 100k and 1M 384-d vectors.

Vectors. Random 384-d unit vectors are a worst case for graph indexes and not what MiniLM
gives, so the corpus is built from real all-MiniLM-L6-v2 vectors: --pool distinct sentences
of bench/speed.py's corpus are embedded with the real model (cached in --cache), and each of
the N vectors is `normalise(pool[a] + w * pool[b] + noise)` with a, b drawn at random, w in
[0, 0.5) and Gaussian noise of sigma 0.03 per dimension (cosine to pool[a] ~0.8): clusters
around real sentence vectors, mixed like paraphrases. Queries are the real-model vectors of
bench/speed.py's 200 queries (common and rare terms), none of which is in the corpus.

Each candidate runs in its own fresh interpreter (its peak RSS, VmHWM, is its own; the
vectors are memory-mapped from the cache, so they count only as far as the build reads them)
with --threads threads for the build and one thread for queries (as a server answers one
search on one core). Where a library stores int8 (or 8-bit float) vectors, the top
--rescore candidates are re-scored exactly with the float32 vectors, the way Recall serves
them; recall is of the re-scored list.

    python bench/ann_candidates.py --sizes 100000 1000000 [--only usearch faiss_hnsw]
    python bench/ann_candidates.py --quick            # 20k, no RESULTS.md
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

DIM = 384
K = 10
#: Search breadths tried on one build (HNSW ef; IVF nprobe = ef / 8).
EFS = (256, 512, 1024, 2048)


# -- vectors ------------------------------------------------------------------------------------
def pool_vectors(cache: Path, n_pool: int) -> tuple[np.ndarray, np.ndarray]:
    """(pool, queries): real MiniLM vectors of corpus sentences and of the speed queries."""
    path = cache / f"pool_{n_pool}.npz"
    if path.exists():
        z = np.load(path)
        return z["pool"], z["queries"]
    from speed import _model_embedder, corpus, make_queries

    texts = list(dict.fromkeys(corpus(n_pool * 3)))[:n_pool]
    queries = [q for _, q in make_queries(200)]

    async def run() -> tuple[np.ndarray, np.ndarray]:
        emb = _model_embedder()
        p = np.asarray(await emb.embed(texts), dtype=np.float32)
        q = np.asarray(await emb.embed(queries), dtype=np.float32)
        return p, q

    pool, qv = asyncio.run(run())
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, pool=pool, queries=qv)
    return pool, qv


def corpus_vectors(cache: Path, n: int, pool: np.ndarray) -> Path:
    """N mixed vectors (module docstring) as a float32 .npy, built in blocks."""
    path = cache / f"vectors_{n}_{len(pool)}.npy"
    if path.exists():
        return path
    rng = np.random.default_rng(20261127)
    out = np.lib.format.open_memmap(str(path) + ".part", mode="w+", dtype=np.float32,
                                    shape=(n, DIM))
    for start in range(0, n, 50_000):
        m = min(50_000, n - start)
        a = rng.integers(0, len(pool), m)
        b = rng.integers(0, len(pool), m)
        w = rng.random(m, dtype=np.float32)[:, None] * 0.5
        v = pool[a] + w * pool[b] + rng.normal(0, 0.03, (m, DIM)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        out[start:start + m] = v
    out.flush()
    del out
    os.replace(str(path) + ".part", path)
    return path


def truth(cache: Path, vec_path: Path, queries: np.ndarray, k: int = 50) -> np.ndarray:
    path = vec_path.with_suffix(".truth.npy")
    if path.exists():
        return np.load(path)
    x = np.load(vec_path, mmap_mode="r")
    qn = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    best_s = np.full((len(qn), 0), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(qn), 0), dtype=np.int64)
    for start in range(0, len(x), 100_000):
        s = qn @ np.asarray(x[start:start + 100_000]).T
        top = np.argpartition(-s, k - 1, axis=1)[:, :k]
        best_s = np.concatenate([best_s, np.take_along_axis(s, top, 1)], 1)
        best_i = np.concatenate([best_i, top + start], 1)
        keep = np.argsort(-best_s, axis=1, kind="stable")[:, :k]
        best_s = np.take_along_axis(best_s, keep, 1)
        best_i = np.take_along_axis(best_i, keep, 1)
    np.save(path, best_i)
    return best_i


# -- candidates (each: build(x, threads) -> index; query(index, q, k) -> ids; size(index)) ------
def _usearch(dtype: str, conn: int, ef_add: int, ef_search: int):
    from usearch.index import Index

    def build(x: np.ndarray, threads: int, tmp: Path) -> Any:
        idx = Index(ndim=DIM, metric="cos", dtype=dtype, connectivity=conn,
                    expansion_add=ef_add, expansion_search=ef_search)
        for start in range(0, len(x), 100_000):
            block = np.asarray(x[start:start + 100_000])
            idx.add(np.arange(start, start + len(block), dtype=np.uint64), block,
                    threads=threads)
        path = tmp / "usearch.idx"
        idx.save(str(path))
        return idx

    def reopen(tmp: Path) -> Any:
        return Index.restore(str(tmp / "usearch.idx"), view=True)

    def query(idx: Any, q: np.ndarray, k: int, ef: int) -> np.ndarray:
        idx.expansion_search = ef  # not saved in the file: set after every restore
        return idx.search(q, k, threads=1).keys

    return build, query, reopen


def _faiss_hnsw(m: int, ef_c: int, ef_s: int):
    import faiss

    def build(x: np.ndarray, threads: int, tmp: Path) -> Any:
        faiss.omp_set_num_threads(threads)
        idx = faiss.IndexHNSWSQ(DIM, faiss.ScalarQuantizer.QT_8bit, m,
                                faiss.METRIC_INNER_PRODUCT)
        idx.hnsw.efConstruction = ef_c
        idx.train(np.asarray(x[:100_000]))
        for start in range(0, len(x), 100_000):
            idx.add(np.asarray(x[start:start + 100_000]))
        faiss.write_index(idx, str(tmp / "faiss.idx"))
        return idx

    def reopen(tmp: Path) -> Any:
        return faiss.read_index(str(tmp / "faiss.idx"), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)

    def query(idx: Any, q: np.ndarray, k: int, ef: int) -> np.ndarray:
        faiss.omp_set_num_threads(1)
        idx.hnsw.efSearch = max(ef, k)
        return idx.search(q[None, :], k)[1][0]

    return build, query, reopen


def _faiss_ivf(nlist: int, nprobe: int):
    import faiss

    def build(x: np.ndarray, threads: int, tmp: Path) -> Any:
        faiss.omp_set_num_threads(threads)
        quant = faiss.IndexFlatIP(DIM)
        idx = faiss.IndexIVFScalarQuantizer(quant, DIM, nlist, faiss.ScalarQuantizer.QT_8bit,
                                            faiss.METRIC_INNER_PRODUCT)
        sample = np.asarray(x[::max(1, len(x) // (nlist * 40))])
        idx.train(sample)
        for start in range(0, len(x), 100_000):
            idx.add(np.asarray(x[start:start + 100_000]))
        faiss.write_index(idx, str(tmp / "faiss.idx"))
        return idx

    def reopen(tmp: Path) -> Any:
        return faiss.read_index(str(tmp / "faiss.idx"), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)

    def query(idx: Any, q: np.ndarray, k: int, ef: int) -> np.ndarray:
        faiss.omp_set_num_threads(1)
        idx.nprobe = max(1, ef // 8)  # ef 256 -> nprobe 32
        return idx.search(q[None, :], k)[1][0]

    return build, query, reopen


def _hnswlib(m: int, ef_c: int, ef_s: int):
    import hnswlib

    def build(x: np.ndarray, threads: int, tmp: Path) -> Any:
        idx = hnswlib.Index(space="cosine", dim=DIM)
        idx.init_index(max_elements=len(x), M=m, ef_construction=ef_c)
        for start in range(0, len(x), 100_000):
            block = np.asarray(x[start:start + 100_000])
            idx.add_items(block, np.arange(start, start + len(block)), num_threads=threads)
        idx.save_index(str(tmp / "hnswlib.idx"))
        return idx

    def reopen(tmp: Path) -> Any:
        idx = hnswlib.Index(space="cosine", dim=DIM)
        idx.load_index(str(tmp / "hnswlib.idx"))
        return idx

    def query(idx: Any, q: np.ndarray, k: int, ef: int) -> np.ndarray:
        idx.set_ef(max(ef, k))
        idx.set_num_threads(1)
        return idx.knn_query(q, k)[0][0]

    return build, query, reopen


def _voyager(m: int, ef_c: int, ef_s: int):
    from voyager import Index, Space, StorageDataType

    def build(x: np.ndarray, threads: int, tmp: Path) -> Any:
        idx = Index(Space.Cosine, num_dimensions=DIM, M=m, ef_construction=ef_c,
                    storage_data_type=StorageDataType.E4M3, max_elements=len(x))
        for start in range(0, len(x), 100_000):
            block = np.array(x[start:start + 100_000], dtype=np.float32)  # writable copy
            idx.add_items(block, list(range(start, start + len(block))), num_threads=threads)
        idx.save(str(tmp / "voyager.idx"))
        return idx

    def reopen(tmp: Path) -> Any:
        return Index.load(str(tmp / "voyager.idx"))

    def query(idx: Any, q: np.ndarray, k: int, ef: int) -> np.ndarray:
        return idx.query(q, k, num_threads=1, query_ef=max(ef, k))[0]

    return build, query, reopen


CANDIDATES: dict[str, tuple[str, Any]] = {
    "usearch": ("usearch HNSW i8, M=16, ef_add=64, ef_search=256",
                lambda: _usearch("i8", 16, 64, 256)),
    "faiss_hnsw": ("faiss IndexHNSWSQ 8-bit, M=16, efC=64, efS=256",
                   lambda: _faiss_hnsw(16, 64, 256)),
    "faiss_ivf": ("faiss IVF-SQ8, nlist=2*sqrt(N), nprobe=32", None),
    "hnswlib": ("hnswlib HNSW float32 (no quantization), M=16, efC=64, ef=256",
                lambda: _hnswlib(16, 64, 256)),
    "voyager": ("voyager HNSW E4M3 8-bit float, M=16, efC=64, ef=256",
                lambda: _voyager(16, 64, 256)),
}


def _make(name: str, n: int):
    if name == "faiss_ivf":
        return _faiss_ivf(int(2 * np.sqrt(n)), 32)
    return CANDIDATES[name][1]()


def vmhwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def vmrss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(name: str, vec_path: str, cache: str, threads: int, rescore: int) -> dict[str, Any]:
    """One candidate at one size, in this (fresh) process."""
    import tempfile

    x = np.load(vec_path, mmap_mode="r")
    pool_q = np.load(Path(cache) / "queries.npy")
    gt = np.load(Path(vec_path).with_suffix(".truth.npy"))
    build, query, reopen = _make(name, len(x))
    base = vmrss_mb()
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        t0 = time.perf_counter()
        idx = build(x, threads, Path(tmp))
        build_s = time.perf_counter() - t0
        built_rss = vmrss_mb() - base
        peak = vmhwm_mb()
        file_mb = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 2**20
        del idx
        t0 = time.perf_counter()
        idx = reopen(Path(tmp))
        reopen_ms = (time.perf_counter() - t0) * 1000
        qn = pool_q / np.linalg.norm(pool_q, axis=1, keepdims=True)
        by_ef = {}
        for ef in EFS:
            for q in qn[:20]:  # warm the pages a server's first searches touch
                query(idx, q, rescore, ef)
            lat, hits10, hits50, raw10 = [], [], [], []
            for qi, q in enumerate(qn):
                t0 = time.perf_counter()
                cand = np.asarray(query(idx, q, rescore, ef), dtype=np.int64)
                cand = cand[cand >= 0]
                # Exact re-scoring of the candidates with the float32 vectors (sorted rows:
                # the reads a storage does for them).
                order = np.sort(cand)
                exact = np.asarray(x[order]) @ q
                ranked = order[np.argsort(-exact, kind="stable")]
                lat.append((time.perf_counter() - t0) * 1000)
                hits10.append(len(set(ranked[:K]) & set(gt[qi, :K])) / K)
                hits50.append(len(set(ranked[:50]) & set(gt[qi, :50])) / 50)
                raw10.append(len(set(cand[:K]) & set(gt[qi, :K])) / K)
            by_ef[ef] = {"p50_ms": round(statistics.median(lat), 3),
                         "p95_ms": round(sorted(lat)[int(0.95 * len(lat))], 3),
                         "recall10": round(float(np.mean(hits10)), 4),
                         "recall50": round(float(np.mean(hits50)), 4),
                         "recall10_raw": round(float(np.mean(raw10)), 4)}
        reopened_rss = vmrss_mb() - base
    return {"name": name, "n": len(x), "build_s": round(build_s, 1),
            "build_rate": round(len(x) / build_s), "by_ef": by_ef,
            "file_mb": round(file_mb, 1), "built_rss_mb": round(built_rss, 1),
            "peak_rss_mb": round(peak, 1), "reopen_ms": round(reopen_ms, 1),
            "reopened_rss_mb": round(reopened_rss, 1)}


def exact_row(vec_path: str, cache: str) -> dict[str, Any]:
    """The baseline: exact float32 scan (what VectorIndex does) at this size."""
    x = np.load(vec_path, mmap_mode="r")
    x = np.ascontiguousarray(x)
    pool_q = np.load(Path(cache) / "queries.npy")
    qn = pool_q / np.linalg.norm(pool_q, axis=1, keepdims=True)
    lat = []
    for q in qn[:50]:
        t0 = time.perf_counter()
        s = x @ q
        top = np.argpartition(-s, 49)[:50]
        top[np.argsort(-s[top])]
        lat.append((time.perf_counter() - t0) * 1000)
    return {"name": "exact", "n": len(x), "p50_ms": round(statistics.median(lat), 2),
            "recall10": 1.0, "peak_rss_mb": round(vmhwm_mb(), 1),
            "file_mb": round(x.nbytes / 2**20, 1)}


def loadavg() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--only", nargs="+", default=list(CANDIDATES))
    ap.add_argument("--pool", type=int, default=6000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rescore", type=int, default=100,
                    help="candidates taken from the index and re-scored exactly")
    ap.add_argument("--timeout", type=int, default=1500, help="seconds per candidate run")
    ap.add_argument("--cache", default="/tmp/ann_bench")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    cache = Path(args.cache)
    if args.child:
        name, vec_path = args.child
        fn = exact_row(vec_path, str(cache)) if name == "exact" else child(
            name, vec_path, str(cache), args.threads, args.rescore)
        print("RESULT " + json.dumps(fn), flush=True)
        return
    if args.quick:
        args.sizes = [20_000]
    pool, queries = pool_vectors(cache, args.pool)
    np.save(cache / "queries.npy", queries)
    rows = []
    for n in args.sizes:
        vec_path = corpus_vectors(cache, n, pool)
        truth(cache, vec_path, queries)
        for name in ["exact", *args.only]:
            load = loadavg()
            cmd = [sys.executable, __file__, "--cache", str(cache), "--threads",
                   str(args.threads), "--rescore", str(args.rescore), "--child", name,
                   str(vec_path)]
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                r = {"name": name, "n": n, "error": f"build over {args.timeout} s"}
            else:
                lines = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
                r = (json.loads(lines[-1][7:]) if lines else
                     {"name": name, "n": n, "error": out.stderr.strip().splitlines()[-1:]})
            r["load"] = load
            rows.append(r)
            print(json.dumps(r), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
