"""This process's place in a `recall serve --workers N` group (cli/supervisor.py starts it).

A group is one supervising parent and N server processes on one machine, behind one port.
The parent hands each child its place in one environment variable: its index, the group's
size, the shared run directory (removed when the parent exits) and the file descriptors of
the sockets it bound. What the children share lives in that directory, never in the
database: Prometheus' per-process metric files, the inspector's sign-in sessions
(inspector/shared_sessions.py) and one heartbeat file per child, from which every child's
/health reports the whole group.

Index 0 is the leader: it alone runs the loops whose work is not claimed row by row (decay,
retention, the embedding backfill, the webhook deliverer) and serves /metrics. The parent
restarts a dead child with the same index, so there is always one leader.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("recall.group")

ENV = "RECALL_PROCESS_GROUP"
#: A child whose heartbeat is older than this is reported as not answering.
STALE_AFTER = 5.0
BEAT_EVERY = 1.0


@dataclass(frozen=True)
class Group:
    index: int
    count: int
    #: The run directory the parent made for this group.
    dir: str
    #: The parent's pid: a child whose parent is gone stops itself.
    parent: int
    #: The listening socket this child serves on (inherited from the parent).
    listen_fd: int | None = None
    #: The /metrics listener (the leader only).
    metrics_fd: int | None = None

    @property
    def leader(self) -> bool:
        return self.index == 0

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> Group | None:
        raw = os.environ.get(ENV)
        return cls(**json.loads(raw)) if raw else None

    def beat_path(self, index: int) -> Path:
        return Path(self.dir) / f"health-{index}.json"


def write_beat(group: Group, state: dict[str, Any]) -> None:
    """This child's heartbeat, written whole (a reader never sees half a file)."""
    path = group.beat_path(group.index)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"index": group.index, "pid": os.getpid(), "at": time.time(),
                               **state}))
    os.replace(tmp, path)


def read_beats(group: Group) -> list[dict[str, Any]]:
    """Every child's last heartbeat, `answering` False when it is missing or stale."""
    now = time.time()
    out = []
    for index in range(group.count):
        try:
            beat = json.loads(group.beat_path(index).read_text())
        except (OSError, ValueError):
            beat = {"index": index}
        beat["answering"] = now - float(beat.get("at", 0)) <= STALE_AFTER
        out.append(beat)
    return out


def group_reasons(group: Group) -> list[str]:
    """What /health calls degraded about the other processes of the group."""
    reasons = []
    for beat in read_beats(group):
        if not beat["answering"]:
            reasons.append(f"process {beat['index'] + 1} of {group.count} is not answering "
                           f"(the supervisor restarts it)")
        elif beat.get("ok") is False:
            reasons.append(f"process {beat['index'] + 1} of {group.count}: worker loop dead "
                           f"or stuck")
    return reasons


async def heartbeat(group: Group, state: Any) -> None:
    """Beat every second with `state()` (this process's health); stop this process when the
    parent is gone (a SIGKILLed supervisor must not leave servers nobody restarts)."""
    while True:
        if os.getppid() != group.parent:
            log.error("the supervising process %d is gone; stopping", group.parent)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        try:
            await asyncio.to_thread(write_beat, group, state())
        except OSError as exc:  # the run directory went away: the parent is stopping
            log.debug("heartbeat not written: %s", exc)
        await asyncio.sleep(BEAT_EVERY)
