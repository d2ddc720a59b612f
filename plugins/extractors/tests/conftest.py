"""The rule-based extractor the tests read statements with: one per test module (it keeps
readings cached by id; a module's tests share them, as one worker's jobs do)."""

from __future__ import annotations

import pytest

from recall_extractors import StubSettings, make_stub
from recall_extractors.stub import StubExtractor


@pytest.fixture(scope="module")
def stub() -> StubExtractor:
    return make_stub(StubSettings())
