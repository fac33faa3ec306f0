"""What the Nextcloud and plain-WebDAV faces received, for /_control/stats.

Tests prove with these that a client sent no more than it should: chunk PUTs
and their bytes (a broken-off chunk counts what arrived), MOVEs, chunked
assemblies, PUTs per path, and the most chunk PUTs one upload folder had in
flight at once (a client sends the chunks of one file one at a time). Touched from the event loop and from wsgidav's
worker threads, so one lock guards everything.
"""

from __future__ import annotations

import threading
from collections import Counter


class Counters:
    def __init__(self):
        self._lock = threading.Lock()
        self.chunks_in_flight: Counter = Counter()  # upload folder -> chunk PUTs running now
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.chunk_puts = 0
            self.chunk_bytes = 0
            self.moves = 0
            self.assemblies: Counter = Counter()  # destination path -> successful MOVE .file
            self.puts: Counter = Counter()  # path -> PUTs (files and chunks)
            self.put_bytes = 0  # body bytes of file PUTs (not chunks)
            # upload folder -> most chunk PUTs running at once; those still running stay counted
            self.max_chunks_in_flight: dict[str, int] = dict(self.chunks_in_flight)

    def chunk_put(self, path: str) -> None:
        with self._lock:
            self.chunk_puts += 1
            self.puts[path] += 1

    def chunk_started(self, transfer: str) -> None:
        with self._lock:
            self.chunks_in_flight[transfer] += 1
            now = self.chunks_in_flight[transfer]
            if now > self.max_chunks_in_flight.get(transfer, 0):
                self.max_chunks_in_flight[transfer] = now

    def chunk_ended(self, transfer: str) -> None:
        with self._lock:
            self.chunks_in_flight[transfer] -= 1
            if self.chunks_in_flight[transfer] <= 0:
                del self.chunks_in_flight[transfer]

    def chunk_body(self, n: int) -> None:
        with self._lock:
            self.chunk_bytes += n

    def file_put(self, path: str) -> None:
        with self._lock:
            self.puts[path] += 1

    def file_body(self, n: int) -> None:
        with self._lock:
            self.put_bytes += n

    def move(self) -> None:
        with self._lock:
            self.moves += 1

    def assembled(self, destination: str) -> None:
        with self._lock:
            self.assemblies[destination] += 1

    def snapshot(self) -> dict:
        with self._lock:
            return {
                "chunk_puts": self.chunk_puts,
                "chunk_bytes": self.chunk_bytes,
                "moves": self.moves,
                "assemblies": dict(self.assemblies),
                "puts": dict(self.puts),
                "put_bytes": self.put_bytes,
                "max_concurrent_chunk_puts": dict(self.max_chunks_in_flight),
            }
