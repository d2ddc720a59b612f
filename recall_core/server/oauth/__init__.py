"""OAuth for /mcp ([oauth] in recall.toml). `builtin`: Recall's own authorization server
(with `builtin_clients` and `consent`)."""
