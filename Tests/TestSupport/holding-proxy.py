#!/usr/bin/env python3
"""A TCP proxy on loopback for tests: it forwards every connection to one server and,
once armed, holds a connection's client bytes until released, so a test can act while
an upload is on its way:
  --hold-after N   once the connection has carried more than N bytes from the client
                   (the server has seen part of a body, the client waits);
  --hold-at VERB   from the first request whose request line starts with VERB (the
                   server has seen nothing of it yet).

Prints `READY <port>` once it listens and `HELD` each time a connection is held.
SIGUSR1 releases whatever is held and holds nothing more; SIGHUP prints `SENT <n>`, the
bytes clients have sent through it so far.
"""

import argparse
import asyncio
import signal
import sys


class Hold:
    def __init__(self, after, verb):
        self.after = after
        self.verb = verb
        self.armed = True
        self.released = asyncio.Event()
        self.sent = 0

    def release(self):
        self.armed = False
        self.released.set()

    def report(self):
        print("SENT", self.sent, flush=True)


async def pipe(reader, writer, hold=None):
    carried = 0
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if hold is not None:
                hold.sent += len(data)
                if hold.armed and hold.verb is not None and data.startswith(hold.verb + b" "):
                    print("HELD", flush=True)
                    await hold.released.wait()
                elif hold.armed and hold.after is not None and carried + len(data) > hold.after:
                    keep = max(0, hold.after - carried)
                    if keep:
                        writer.write(data[:keep])
                        await writer.drain()
                        carried += keep
                        data = data[keep:]
                    print("HELD", flush=True)
                    await hold.released.wait()
            writer.write(data)
            await writer.drain()
            carried += len(data)
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target-port", type=int, required=True)
    parser.add_argument("--hold-after", type=int)
    parser.add_argument("--hold-at")
    args = parser.parse_args()
    hold = Hold(args.hold_after, args.hold_at.encode() if args.hold_at else None)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, hold.release)
    loop.add_signal_handler(signal.SIGHUP, hold.report)

    async def serve(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", args.target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, server_writer, hold), pipe(server_reader, client_writer))

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    print("READY", server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
