from __future__ import annotations

import importlib.metadata

import recall_embeddings
from recall_core.testing import registrations
from recall_embeddings import DenseSettings, make_dense


def test_entry_point_is_installed():
    [ep] = importlib.metadata.entry_points(group="recall", name="embeddings")
    assert ep.value == "recall_embeddings"
    assert ep.dist.name == "recall-embeddings" and ep.dist.version == "0.1.0"


def test_register_rankers_offers_dense(recall_plugin_manager):
    pm = recall_plugin_manager
    pm.register(recall_embeddings, name="embeddings")
    try:
        entry = registrations(pm, "register_rankers").get("dense")
        assert entry.factory is make_dense
        assert entry.settings is DenseSettings
        assert entry.options == {"default_weight": 0.7}
    finally:
        pm.unregister(recall_embeddings)


def test_importing_the_plugin_does_not_import_torch():
    import subprocess
    import sys

    code = "import recall_embeddings, sys; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
