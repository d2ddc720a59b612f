"""Test plugins a `recall serve` process loads with RECALL_PLUGIN_MODULES=recall_testkit.plugins.<module>."""
