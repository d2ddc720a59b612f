"""Helpers shared by Recall's own test suites (tests/, plugins/*/tests, examples, bench).

- `serverproc`: `recall serve` as a real process on a free port (`ServerProcess`), an MCP
  client as an agent uses it (`Agent`), the CLI as a subprocess (`recall_cli`), `free_port`.
- `a2a`: another agent talking to Recall over A2A (`A2A`), and readers of a task's parts.
- `backends`: the storage backends core tests run on (SQLite; Postgres with RECALL_TEST_PG_URL).
- `inspector`: a server with data for the inspector's and the admin API's tests.
- `postgres`: pytest fixtures for a fresh schema per test on a real PostgreSQL server.
- `pg_rows`: Memory and Operation rows at fixed times, for storage tests.
- `llama_server`, `scripted_server`: OpenAI-compatible servers (a real local model; a
  scripted one) for the extractors' tests and bench.
- `plugins`: test plugins a server loads with RECALL_PLUGIN_MODULES=recall_testkit.plugins.<name>.
"""
