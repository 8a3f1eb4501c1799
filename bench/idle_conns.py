#!/usr/bin/env python3
"""Idle keep-alive connection cost of an HTTP server on 127.0.0.1.

Opens N connections; each sends one complete `GET /plaintext` and reads the whole
response, then stays open and idle. With --websocket PATH each instead upgrades to a
WebSocket at PATH (no extension offered), with --h2 each speaks HTTP/2 with prior
knowledge (the preface, SETTINGS, one GET on stream 1, its answer read), and stays
open and idle. The server's VmRSS (summed over the given PIDs
and all their descendants, e.g. nginx master + workers) is read before connecting
and after, and the difference is reported per connection still open. Everything is
bounded by --timeout; all sockets are closed at the end.

The result line (parsed by plaintext.sh and websocket.sh), printed once measured:
  result kib_per_conn=<float> open=<n> rss_before_kib=<n> rss_after_kib=<n>
"""
import argparse
import asyncio
import os
import resource
import sys
import time


def descendants(pids):
    """The given PIDs plus every process whose parent chain reaches one of them."""
    parent = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            parent[int(entry)] = int(fields[1])  # field 4: ppid
        except (OSError, IndexError, ValueError):
            continue
    found = set(pids)
    changed = True
    while changed:
        changed = False
        for pid, ppid in parent.items():
            if ppid in found and pid not in found:
                found.add(pid)
                changed = True
    return sorted(found)


def rss_kib(pids):
    total = 0
    for pid in descendants(pids):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= need:
        return soft
    target = need if hard == resource.RLIM_INFINITY or hard >= need else hard
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(target, soft), max(hard, target)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


async def open_one(port, request, streams, sem, io_timeout):
    async with sem:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), io_timeout)
        streams.append((reader, writer))  # registered first, so it is closed even on error
        writer.write(request)
        await writer.drain()
        if request.startswith(H2_PREFACE):
            await asyncio.wait_for(read_h2_answer(reader), io_timeout)
            return
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), io_timeout)
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " in status + b" ":
            return  # a WebSocket: no body, the connection is the server's now
        if b" 200 " not in status + b" ":
            raise RuntimeError(f"unexpected status line {status!r}")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        if length:
            await asyncio.wait_for(reader.readexactly(length), io_timeout)


H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def h2_request():
    """The preface, an empty SETTINGS, a SETTINGS ACK's room, and GET /plaintext on
    stream 1 (HPACK: static-table indexes and literal :authority, never indexed)."""
    def frame(ftype, flags, stream, payload):
        return len(payload).to_bytes(3, "big") + bytes([ftype, flags]) + stream.to_bytes(4, "big") + payload
    path = b"/plaintext"
    block = (bytes([0x82, 0x86]) + bytes([0x04, len(path)]) + path  # :method GET, :scheme http, :path
             + bytes([0x01, 9]) + b"127.0.0.1")                      # :authority
    return H2_PREFACE + frame(4, 0, 0, b"") + frame(1, 0x05, 1, block)  # HEADERS: END_STREAM|END_HEADERS


async def read_h2_answer(reader):
    """Frames until stream 1 ends (a DATA or HEADERS frame with END_STREAM); ACKs nothing
    (the server does not need it to answer)."""
    while True:
        head = await reader.readexactly(9)
        length = int.from_bytes(head[:3], "big")
        ftype, flags, stream = head[3], head[4], int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
        await reader.readexactly(length)
        if stream == 1 and ftype in (0, 1) and flags & 0x1:
            return
        if ftype == 7:
            raise RuntimeError("GOAWAY from the server")


def still_open(streams):
    """Connections the server has not closed (no EOF pending on our side)."""
    return sum(1 for reader, writer in streams if not reader.at_eof() and not writer.is_closing())


async def run(args):
    request = b"GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    if args.h2:
        request = h2_request()
    if args.websocket:
        request = (b"GET " + args.websocket.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                   b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   b"Sec-WebSocket-Version: 13\r\n\r\n")
    streams = []
    sem = asyncio.Semaphore(args.parallel)
    before = rss_kib(args.pid)
    errors = 0
    t0 = time.monotonic()
    try:
        tasks = [asyncio.ensure_future(open_one(args.port, request, streams, sem, args.io_timeout))
                 for _ in range(args.n)]
        done, pending = await asyncio.wait(tasks, timeout=args.timeout)
        for t in pending:
            t.cancel()
        errors = len(pending) + sum(1 for t in done if t.exception() is not None)
        first_error = next((t.exception() for t in done if t.exception() is not None), None)
        if first_error is not None:
            print(f"first error: {first_error!r}", file=sys.stderr)
        await asyncio.sleep(args.settle)  # let the server finish its per-connection work
        opened = still_open(streams)
        after = rss_kib(args.pid)
        elapsed = time.monotonic() - t0
        print(f"result kib_per_conn={(after - before) / opened if opened else float('nan'):.2f} open={opened} "
              f"rss_before_kib={before} rss_after_kib={after}", flush=True)
        if args.hold:  # another load runs meanwhile (bench/websocket.sh: plaintext latency)
            await asyncio.sleep(args.hold)
    finally:
        for _, writer in streams:
            writer.close()
        await asyncio.gather(*(w.wait_closed() for _, w in streams), return_exceptions=True)
    print(f"connections: {opened} open of {args.n} requested, {errors} failed, {elapsed:.1f}s")
    print(f"server VmRSS: {before} KiB before, {after} KiB after")
    return 0 if opened == args.n else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, action="append", required=True,
                    help="server PID (repeatable); its descendants are included")
    ap.add_argument("-n", type=int, default=10000, help="connections (default 10000)")
    ap.add_argument("--parallel", type=int, default=256, help="connections being set up at once")
    ap.add_argument("--timeout", type=float, default=120, help="limit for opening all connections, s")
    ap.add_argument("--io-timeout", type=float, default=10, help="limit per connect/read, s")
    ap.add_argument("--websocket", metavar="PATH", help="upgrade each connection to a WebSocket at PATH")
    ap.add_argument("--h2", action="store_true", help="HTTP/2 with prior knowledge: one GET, then idle")
    ap.add_argument("--hold", type=float, default=0, help="keep the connections open this long after measuring, s")
    ap.add_argument("--settle", type=float, default=1.0, help="wait before reading RSS, s")
    args = ap.parse_args()
    limit = raise_nofile(args.n + 64)
    if limit < args.n + 64:
        print(f"RLIMIT_NOFILE is {limit}; lowering N from {args.n} to {limit - 64}", file=sys.stderr)
        args.n = limit - 64
    sys.exit(asyncio.run(asyncio.wait_for(run(args), args.timeout + args.settle + args.hold + 60)))


if __name__ == "__main__":
    main()
