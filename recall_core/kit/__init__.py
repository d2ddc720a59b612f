"""Helpers plugin authors share with core, so one rule is written once. The kit depends on
nothing of core but its models: core's packages build on it, never the other way.

- `text`: the text rules of full-text search (`fold`, `query_terms`, `index_tokens`): a
  storage's native index must fold and tokenise as core's queries do.
- `keys`: how a fact key is spelt (`key_form`: invisible characters removed, NFKC, case fold,
  one space), and `respell`, the merge a storage's key migration applies.
- `attributes`: the fact inventory and the spelling of fact keys every extractor shares;
  `inventory_text` renders it for a model's prompt.
- `vector_index`: an in-memory exact cosine index a storage can keep fresh incrementally.
- `check_namespace`: every `WriteTx.insert` calls it, so a write never crosses namespaces.
- `split_speaker`: who says a transcript line ("Caroline: ..."), the rule search uses too.
- `ramp`: maps a ranker's score onto 0..1 evidence (`Ranker.evidence`).
- `representable`: the one rule for values at a backend's edges (times, text, numbers, JSON)
  every entry applies, and `stored_instant`, how a storage reads a time back.
"""

from .evidence import ramp
from .rows import check_namespace
from .text import fold, index_tokens, query_terms
from .transcripts import split_speaker

__all__ = ["check_namespace", "fold", "index_tokens", "query_terms", "ramp", "split_speaker"]
