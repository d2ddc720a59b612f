"""Does a newer, unrelated statement go above the fact a question asks about?

    python bench/newer_unrelated.py                                  # MiniLM (the default)
    python bench/newer_unrelated.py --dense multilingual-e5-small-q4 --sets confirm dev3_confirm

The other side of search's newer-first rule (`recall_core/search/newer.py`): for each change
item of issue 27's sets, a namespace of its own holds the item's first text (the fact, still
current) and, a day later, the last text of another item (unrelated: SHIFT items on); the
item's question is asked with default parameters. Counts the questions whose first result is
the unrelated text, so not the fact. A model whose cosines are all close (e5: ~0.8 between
unrelated sentences) made the rule put every newer statement first until its bars were read
through the model's topic scale (`Embedder.topic_scale`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from topic_scale import changes  # noqa: E402
from understanding import GAP, drain, holds, runtime  # noqa: E402

SHIFT = 7


async def run(sets: list[str], dense: str | None) -> None:
    from recall_core.jobs.worker import Worker

    items = changes(sets)
    above = 0
    with tempfile.TemporaryDirectory() as tmp:
        rt = await runtime(str(Path(tmp) / "unrelated.db"), "stub", {}, dense)
        worker = Worker(rt.storage, rt.extractor, rt.embedder, rt.config)
        base = (datetime.now(UTC) - timedelta(days=30)).replace(microsecond=0)
        try:
            for n, item in enumerate(items):
                other = items[(n + SHIFT) % len(items)]["texts"][-1]
                ns = f"unrelated-{n}"
                for i, text in enumerate((item["texts"][0], other)):
                    await rt.service.store(ns, text, created_at=(base + i * GAP).isoformat())
                    await drain(rt, worker)
                found = (await rt.service.search(ns, item["question"]))["results"]
                first = found[0]["text"] if found else ""
                above += not holds(first, item["old"]) and not holds(other, item["old"])
        finally:
            await rt.close()
    print(f"{dense or 'default model'} on {', '.join(sets)}: {len(items)} questions, "
          f"the unrelated newer text first in {above} ({above / len(items):.3f})")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dense", help="the dense ranker's model ([plugins.dense] model)")
    ap.add_argument("--sets", nargs="+", default=["tune", "dev3_tune"])
    args = ap.parse_args(argv)
    asyncio.run(run(args.sets, args.dense))


if __name__ == "__main__":
    main()
