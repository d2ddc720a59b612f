#!/usr/bin/env bash
# The README's quick-start install in a fresh venv, as a new user runs it: no torch and no
# nvidia package may come in, and the server must answer with the embeddings plugin's dense
# ranker ready (torch-free). Then SIGTERM must stop it with exit 0. (issue 15)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

install=$(grep -m1 '^pip install -e \. ' README.md | sed 's/ && recall serve$//')
[ -n "$install" ] || { echo "fresh install: README quick-start command not found" >&2; exit 1; }
python -m venv "$tmp/venv"
started=$(date +%s)
( source "$tmp/venv/bin/activate" && eval "$install -q" )
echo "fresh install: '$install' took $(( $(date +%s) - started )) s, $(du -sm "$tmp/venv" | cut -f1) MB"
if "$tmp/venv/bin/pip" list 2>/dev/null | grep -i -E '^(torch|nvidia|triton)'; then
  echo "fresh install: torch/nvidia came in with the README's command" >&2; exit 1
fi

port=$("$tmp/venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# stub extractor: offline and deterministic even where ANTHROPIC_API_KEY happens to be set
RECALL_EXTRACTOR=stub "$tmp/venv/bin/recall" serve --db "$tmp/r.db" --port "$port" > "$tmp/serve.log" 2>&1 &
pid=$!
# As a user does: wait until the server is up (it creates the database), then make a token
# with the command its start-up lines print.
"$tmp/venv/bin/python" - "$port" <<'PY'
import json, sys, time, urllib.request

deadline = time.monotonic() + 120
while True:
    try:
        url = f"http://127.0.0.1:{sys.argv[1]}/health"
        if json.load(urllib.request.urlopen(url, timeout=2))["status"] == "ok":
            break
    except OSError:
        pass
    if time.monotonic() > deadline:
        sys.exit("fresh install: server not healthy within 120 s")
    time.sleep(0.5)
PY
for _ in $(seq 100); do grep -q "create a token with: " "$tmp/serve.log" && break; sleep 0.1; done
make_token=$(sed -n 's/.*create a token with: \(recall create-token NAMESPACE --db [^ ]*\).*/\1/p' "$tmp/serve.log")
[ -n "$make_token" ] || { echo "fresh install: recall serve printed no create-token command" >&2; cat "$tmp/serve.log" >&2; exit 1; }
token=$(cd "$tmp" && PATH="$tmp/venv/bin:$PATH" eval "${make_token/NAMESPACE/ci} --json" | "$tmp/venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["token"])')
"$tmp/venv/bin/python" - "$port" "$token" <<'PY'
import asyncio, sys
from fastmcp import Client

port, token = sys.argv[1], sys.argv[2]

async def main():
    async with Client(f"http://127.0.0.1:{port}/mcp", auth=token) as c:
        await c.call_tool("store_memory", {"text": "I prefer dark mode in every editor."})
        for _ in range(100):
            stats = (await c.call_tool("get_memory_stats", {})).structured_content["data"]
            if stats["pending_extractions"] == 0:
                break
            await asyncio.sleep(0.1)
        found = (await c.call_tool("search_memories", {"query": "which colour theme?"})).structured_content["data"]
        assert found["degraded"] == [], found["degraded"]
        assert any("dark mode" in r["text"] for r in found["results"]), found
        print("fresh install: semantic search answered:", found["results"][0]["text"])
asyncio.run(main())
PY
kill -TERM "$pid"
code=0
wait "$pid" || code=$?
pid=
[ "$code" -eq 0 ] || { echo "fresh install: recall serve exited $code on SIGTERM" >&2; cat "$tmp/serve.log" >&2; exit 1; }
echo "fresh install: ok"
