"""`recall serve --workers N`: one supervising parent, N server processes behind one port.

Why processes: one process saturates one core (~2.4 ms of CPU per call, most of it in the MCP
SDK and SQLite, under the GIL); two processes on one database served 1.98x the searches.

How the port is shared:
* Linux: the parent binds N listening sockets on the port with SO_REUSEPORT and gives
  socket i to child i. The kernel spreads incoming connections evenly over them (by a hash
  of the connection), which a shared socket does not do: there the first process to wake
  accepts a whole burst of connections, and one keep-alive client's load stays on one
  process. The parent holds every socket for the group's life, so connections that arrive
  while a child restarts wait in its socket's queue instead of being refused, and no other
  program can take the port in between.
* Other POSIX systems (macOS and the BSDs give SO_REUSEPORT other meanings): the parent binds
  one socket and every child accepts on it.
* Windows (no fork, no inheritable listening sockets through subprocess): one process, with
  a log line that says so.

The parent opens the storage once before any child starts (migrations run once, not raced by
N processes) and re-queues the jobs a previous run left running; children never do that at
start (a sibling's running job is not stale). It restarts a child that exits, with the same
index; a child that keeps dying within seconds of its start means a broken setup, and the
group stops with exit 1 instead of spinning. SIGTERM or SIGINT to the parent is passed on as
one SIGTERM to each child (children run in their own session, so a terminal's Ctrl-C reaches
only the parent: uvicorn treats a second signal as "exit now, skip the drain"); the parent
waits for all of them to drain (bounded by shutdown_grace plus the runtime's close) and
exits 0.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

from ..server.group import ENV, Group

log = logging.getLogger("recall")

#: A child that exits within this many seconds of its start counts as a failed start.
QUICK_EXIT = 10.0
#: This many failed starts of one child in a row stop the group.
MAX_QUICK_EXITS = 5


def resolve_workers(value: int | str, transport: str) -> int:
    """The number of server processes: stdio is one; "auto" is the CPUs this process may
    use; Windows is one (see the module docstring)."""
    n = _cpus() if value == "auto" else int(value)
    if transport != "http":
        if n > 1:
            log.info("--workers %s ignored: stdio serves one client, with 1 process", value)
        return 1
    if n > 1 and not hasattr(socket, "AF_UNIX"):  # Windows
        log.warning("--workers %d: several processes need POSIX socket inheritance; this "
                    "platform serves with 1 process", n)
        return 1
    return n


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def reuseport_spreads() -> bool:
    """SO_REUSEPORT balances connections over the sockets only on Linux."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def bind_group(host: str, port: int, n: int, bind: Any) -> list[socket.socket]:
    """The listening sockets of the group: N with SO_REUSEPORT on Linux, else one shared.
    `bind` is serve.bind (its error messages for a busy or unknown address)."""
    probe = bind(host, port)  # a busy port fails here, as without --workers
    if not reuseport_spreads():
        probe.listen(2048)
        return [probe]
    address, family = probe.getsockname(), probe.family
    probe.close()  # the port is free; take it for the group (same uid only can join it)
    socks = []
    try:
        for _ in range(n):
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind(address[:2] if family == socket.AF_INET else address)
            sock.listen(2048)
            sock.set_inheritable(True)
            socks.append(sock)
            address = sock.getsockname()  # port 0: the rest join the port the first got
    except OSError:
        for sock in socks:
            sock.close()
        raise
    return socks


class Supervisor:
    def __init__(self, argv: list[str], n: int, socks: list[socket.socket],
                 metrics_sock: socket.socket | None, shutdown_grace: float):
        self.argv, self.n, self.socks = argv, n, socks
        self.metrics_sock = metrics_sock
        self.grace = shutdown_grace
        self.dir = tempfile.mkdtemp(prefix="recall-workers-")
        os.makedirs(os.path.join(self.dir, "metrics"))
        self.children: dict[int, subprocess.Popen] = {}
        self.started: dict[int, float] = {}
        self.quick_exits: dict[int, int] = {}
        self.stopping = asyncio.Event()
        self.failed = False

    def _spawn(self, index: int) -> None:
        sock = self.socks[index % len(self.socks)]
        fds = [sock.fileno()]
        metrics_fd = None
        if index == 0 and self.metrics_sock is not None:
            metrics_fd = self.metrics_sock.fileno()
            fds.append(metrics_fd)
        group = Group(index=index, count=self.n, dir=self.dir, parent=os.getpid(),
                      listen_fd=sock.fileno(), metrics_fd=metrics_fd)
        env = {**os.environ, ENV: group.to_env(),
               "PROMETHEUS_MULTIPROC_DIR": os.path.join(self.dir, "metrics")}
        self.children[index] = subprocess.Popen(
            [sys.executable, "-m", "recall_core.cli", *self.argv], env=env, pass_fds=fds,
            start_new_session=True)
        self.started[index] = time.monotonic()
        log.info("worker process %d of %d started (pid %d)", index + 1, self.n,
                 self.children[index].pid)

    def _reaped(self, index: int, proc: subprocess.Popen) -> None:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(proc.pid, os.path.join(self.dir, "metrics"))

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_signal, sig)
        try:
            for index in range(self.n):
                self._spawn(index)
            await self._watch()
            await self._drain()
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
            for sock in [*self.socks, self.metrics_sock]:
                if sock is not None:
                    sock.close()
            shutil.rmtree(self.dir, ignore_errors=True)
        return 1 if self.failed else 0

    def _on_signal(self, sig: int) -> None:
        if not self.stopping.is_set():
            log.info("stopping on %s: draining %d worker process(es)",
                     signal.Signals(sig).name, self.n)
            self.stopping.set()

    async def _watch(self) -> None:
        """Restart children that exit, until asked to stop."""
        while not self.stopping.is_set():
            for index, proc in list(self.children.items()):
                code = proc.poll()
                if code is None:
                    continue
                self._reaped(index, proc)
                quick = time.monotonic() - self.started[index] < QUICK_EXIT
                self.quick_exits[index] = self.quick_exits.get(index, 0) + 1 if quick else 0
                if self.quick_exits[index] >= MAX_QUICK_EXITS:
                    log.error("worker process %d exited %d times within %gs of starting "
                              "(last exit code %s): stopping; see its log lines above",
                              index + 1, MAX_QUICK_EXITS, QUICK_EXIT, code)
                    self.failed = True
                    self.stopping.set()
                    break
                log.warning("worker process %d (pid %d) exited with %s; restarting it",
                            index + 1, proc.pid, code)
                await asyncio.sleep(min(5.0, 0.2 * 2 ** self.quick_exits[index]))
                if not self.stopping.is_set():
                    self._spawn(index)
            try:
                await asyncio.wait_for(self.stopping.wait(), timeout=0.2)
            except TimeoutError:
                pass

    async def _drain(self) -> None:
        """SIGTERM each child once; wait for all to finish their requests and close."""
        for proc in self.children.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        # Requests get shutdown_grace, then closing the runtime gets as long again (serve.py).
        deadline = time.monotonic() + 2 * max(self.grace, 1.0) + 10
        while time.monotonic() < deadline:
            if all(p.poll() is not None for p in self.children.values()):
                break
            await asyncio.sleep(0.1)
        for index, proc in self.children.items():
            if proc.poll() is None:
                log.warning("worker process %d did not stop in time; killing it", index + 1)
                proc.kill()
                proc.wait()
            elif proc.returncode not in (0, -signal.SIGTERM):
                log.warning("worker process %d stopped with exit code %s", index + 1,
                            proc.returncode)
        log.info("stopped")
