"""Reading a Docker exec's multiplexed output stream into bounded tails (a task container's command).

Docker frames an attached exec's output as 8-byte headers (stream id, big-endian size) and payloads;
`read_frames` splits them into stdout and stderr `Tail`s (the last `keep` bytes of each, and the total
written) until the stream ends or a deadline passes. Blocking; callers in an event loop use a thread.
"""

from __future__ import annotations

import select
import socket
import time
from typing import Any


class Tail:
    """The last `keep` bytes of one output stream, and how many bytes it wrote in all."""

    def __init__(self, keep: int) -> None:
        self.keep, self.data, self.total = keep, bytearray(), 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > self.keep:
            del self.data[:len(self.data) - self.keep]


def read_frames(sock: Any, deadline: float, out: Tail, err: Tail) -> bool:
    """Read the multiplexed exec stream into the tails until EOF (True) or the deadline (False)."""
    raw = getattr(sock, "_sock", sock)
    buf = b""
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([raw], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = raw.recv(65536)
            if not chunk:
                return True
            buf += chunk
            while len(buf) >= 8:
                size = int.from_bytes(buf[4:8], "big")
                if len(buf) < 8 + size:
                    break
                (err if buf[0] == 2 else out).add(buf[8:8 + size])
                buf = buf[8 + size:]
    except (OSError, ValueError):
        return True
    finally:
        try:
            raw.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            sock.close()
        except OSError:
            pass
