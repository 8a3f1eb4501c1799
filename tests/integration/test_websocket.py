"""WebSocket end to end: Debian's python3-websockets as an independent client, and raw
frames by hand where a well-behaved client would refuse to send what is needed.

Checked: the handshake (Sec-WebSocket-Accept, middleware before it, 426/400/403
refusals, subprotocols by the server's preference, permessage-deflate negotiated with
no context takeover and every server message compressed, none on a route without it);
echo of text and binary, small and 1 MiB, with callbacks and with a coroutine;
frames pipelined behind the handshake; the closing handshake both ways with codes and
reasons; 1009 past max_message; 1007 for text that is not UTF-8 (also split across
fragments); 1002 for protocol errors; the server's pings to a quiet client, and its
close of one that does not answer; a client that stops reading while the server sends
is cut at max_backlog and others are served meanwhile; topics across two worker
processes; a graceful stop (1001). Conformance as a whole is test_autobahn.py.

Every wait is bounded in count and in time; traffic goes only to 127.0.0.1."""

import asyncio
import base64
import hashlib
import os
import socket
import struct
import sys
import time
import unittest

import harness

harness.require_modules(["websockets"], "python3-websockets", "test_websocket")

import websockets  # noqa: E402

HOST = "127.0.0.1"
KEY = "dGhlIHNhbXBsZSBub25jZQ=="


def accept_for(key):
    return base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()


def run(coro, timeout=20):
    return asyncio.run(asyncio.wait_for(coro, timeout))


class RawWs:
    """A WebSocket by hand: the handshake, masked frames out, frames in."""

    def __init__(self, port, path, extra=b"", host=b"127.0.0.1"):
        self.s = socket.create_connection((HOST, port), timeout=5)
        self.buf = b""
        self.s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: " + host + b"\r\nUpgrade: websocket\r\n"
                       b"Connection: Upgrade\r\nSec-WebSocket-Key: " + KEY.encode() +
                       b"\r\nSec-WebSocket-Version: 13\r\n" + extra + b"\r\n")

    def head(self):
        while b"\r\n\r\n" not in self.buf:
            data = self.s.recv(65536)
            if not data:
                raise EOFError("closed before the head")
            self.buf += data
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        return head.decode("latin-1")

    @staticmethod
    def frame(opcode, payload=b"", fin=True, rsv=0, mask=b"\x01\x02\x03\x04"):
        b0 = (0x80 if fin else 0) | rsv | opcode
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", b0, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", b0, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", b0, 0x80 | 127, n)
        masked = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
        return head + mask + masked

    def send(self, opcode, payload=b"", **kw):
        self.s.sendall(self.frame(opcode, payload, **kw))

    def recv_frame(self, timeout=5):
        """(fin, rsv1, opcode, payload), or None at EOF."""
        self.s.settimeout(timeout)
        while True:
            if len(self.buf) >= 2:
                b0, b1 = self.buf[0], self.buf[1]
                n = b1 & 0x7F
                at = 2
                if n == 126 and len(self.buf) >= 4:
                    n = struct.unpack("!H", self.buf[2:4])[0]
                    at = 4
                elif n == 127 and len(self.buf) >= 10:
                    n = struct.unpack("!Q", self.buf[2:10])[0]
                    at = 10
                if (b1 & 0x7F) < 126 or at > 2:
                    if b1 & 0x80:
                        raise AssertionError("a server frame is masked")
                    if len(self.buf) >= at + n:
                        payload = self.buf[at:at + n]
                        self.buf = self.buf[at + n:]
                        return bool(b0 & 0x80), bool(b0 & 0x40), b0 & 0x0F, payload
            try:
                data = self.s.recv(65536)
            except ConnectionResetError:
                return None
            if not data:
                return None
            self.buf += data

    def close_code(self, timeout=5):
        """The code of the server's close frame (skipping others), or None at EOF."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            f = self.recv_frame(max(0.1, deadline - time.monotonic()))
            if f is None:
                return None
            if f[2] == 8:
                return struct.unpack("!H", f[3][:2])[0] if len(f[3]) >= 2 else 1005
        raise AssertionError("no close frame in time")

    def eof(self, timeout=5):
        """True once the server closes TCP (after whatever it still sends)."""
        self.s.settimeout(timeout)
        try:
            while self.s.recv(65536):
                pass
            return True
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False

    def close(self):
        self.s.close()


class WebSocketTest(harness.ServerTestCase):
    server_args = ("--workers", "1")

    def url(self, path):
        return "ws://%s:%d%s" % (HOST, self.port, path)

    # Handshake

    def test_handshake_answers_with_the_accept_key_after_the_middleware(self):
        ws = RawWs(self.port, "/ws/plain")
        head = ws.head()
        ws.close()
        self.assertTrue(head.startswith("HTTP/1.1 101 "), head)
        self.assertIn("Sec-WebSocket-Accept: " + accept_for(KEY), head)
        self.assertIn("Upgrade: websocket", head)
        self.assertIn("Connection: Upgrade", head)
        self.assertIn("X-Middleware: 1", head)  # the app's middleware ran before the upgrade
        self.assertNotIn("Sec-WebSocket-Extensions", head)  # not offered by the client

    def test_a_plain_get_is_told_to_upgrade(self):
        r = self.get("/ws/echo")
        self.assertEqual(r.status, 426)
        self.assertEqual(r.header("upgrade"), "websocket")
        self.assertEqual(r.header("sec-websocket-version"), "13")

    def test_another_version_gets_426_naming_13(self):
        with self.connect() as c:
            r = c.request("GET", "/ws/echo", [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                               ("Sec-WebSocket-Key", KEY), ("Sec-WebSocket-Version", "8")])
        self.assertEqual(r.status, 426)
        self.assertEqual(r.header("sec-websocket-version"), "13")

    def test_a_malformed_key_is_a_bad_request(self):
        with self.connect() as c:
            r = c.request("GET", "/ws/echo", [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                               ("Sec-WebSocket-Key", "short"), ("Sec-WebSocket-Version", "13")])
        self.assertEqual(r.status, 400)

    def test_cross_origin_is_refused_unless_allowed(self):
        def status(origin, host=b"127.0.0.1"):
            ws = RawWs(self.port, "/ws/small", b"Origin: " + origin.encode() + b"\r\n", host=host)
            head = ws.head()
            ws.close()
            return int(head.split(" ")[1])
        self.assertEqual(status("https://evil.example"), 403)
        self.assertEqual(status("https://trusted.example"), 101)
        self.assertEqual(status("http://app.example:8080", host=b"app.example:8080"), 101)  # same origin

    def test_the_servers_preferred_subprotocol_is_chosen(self):
        async def go():
            async with websockets.connect(self.url("/ws/small"), subprotocols=["chat.v1", "chat.v2"]) as ws:
                self.assertEqual(ws.subprotocol, "chat.v2")
                await ws.send("protocol")
                self.assertEqual(await ws.recv(), "chat.v2")
            async with websockets.connect(self.url("/ws/small"), subprotocols=["other"]) as ws:
                self.assertIsNone(ws.subprotocol)
        run(go())

    # Messages

    def test_echo_text_and_binary_small_and_large(self):
        async def go(path):
            async with websockets.connect(self.url(path), max_size=None) as ws:
                await ws.send("héllo")
                self.assertEqual(await ws.recv(), "héllo")
                await ws.send(b"\x00\xff\x10")
                self.assertEqual(await ws.recv(), b"\x00\xff\x10")
                big = os.urandom(1 << 20)
                await ws.send(big)
                self.assertEqual(await ws.recv(), big)
                await ws.send("")
                self.assertEqual(await ws.recv(), "")
        run(go("/ws/echo"))
        run(go("/ws/echo-co"))

    def test_the_coroutine_form_waits_between_messages(self):
        async def go():
            async with websockets.connect(self.url("/ws/echo-co")) as ws:
                for i in range(20):
                    await ws.send("sleep" if i % 5 == 0 else "m%d" % i)
                got = [await ws.recv() for _ in range(20)]
                self.assertEqual(got, ["sleep" if i % 5 == 0 else "m%d" % i for i in range(20)])
        run(go())

    def test_compression_is_negotiated_and_every_message_compressed(self):
        ws = RawWs(self.port, "/ws/echo", b"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n")
        head = ws.head()
        self.assertIn("Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; "
                      "client_no_context_takeover; client_max_window_bits=15", head)
        ws.send(1, b"a" * 4000)  # sent uncompressed: allowed under the extension
        fin, rsv1, opcode, payload = ws.recv_frame()
        self.assertTrue(rsv1)
        self.assertEqual(opcode, 1)
        self.assertLess(len(payload), 100)
        import zlib
        self.assertEqual(zlib.decompressobj(-15).decompress(payload + b"\x00\x00\xff\xff"), b"a" * 4000)
        # A compressed message from the client inflates.
        co = zlib.compressobj(6, zlib.DEFLATED, -15)
        data = co.compress(b"hello " * 100) + co.flush(zlib.Z_SYNC_FLUSH)
        ws.send(1, data[:-4], rsv=0x40)
        fin, rsv1, opcode, payload = ws.recv_frame()
        self.assertEqual(zlib.decompressobj(-15).decompress(payload + b"\x00\x00\xff\xff"), b"hello " * 100)
        ws.close()

    def test_websockets_library_with_compression(self):
        async def go():
            async with websockets.connect(self.url("/ws/echo"), compression="deflate") as ws:
                self.assertIsNotNone(ws.extensions)
                for size in (1, 100, 70000):
                    msg = "z" * size
                    await ws.send(msg)
                    self.assertEqual(await ws.recv(), msg)
        run(go())

    def test_frames_behind_the_handshake_in_the_same_packet(self):
        s = socket.create_connection((HOST, self.port), timeout=5)
        s.sendall(b"GET /ws/plain HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  b"Sec-WebSocket-Key: " + KEY.encode() + b"\r\nSec-WebSocket-Version: 13\r\n\r\n" +
                  RawWs.frame(1, b"early") + RawWs.frame(1, b"bird"))
        ws = RawWs.__new__(RawWs)
        ws.s, ws.buf = s, b""
        self.assertIn("101", ws.head())
        self.assertEqual(ws.recv_frame()[3], b"early")
        self.assertEqual(ws.recv_frame()[3], b"bird")
        ws.close()

    def test_fragments_and_pings_between_them(self):
        ws = RawWs(self.port, "/ws/plain")
        ws.head()
        ws.send(1, b"frag", fin=False)
        ws.send(9, b"ping!")
        ws.send(0, b"men", fin=False)
        ws.send(0, b"ted")
        self.assertEqual(ws.recv_frame()[2:], (10, b"ping!"))  # the pong comes first
        self.assertEqual(ws.recv_frame()[2:], (1, b"fragmented"))
        ws.close()

    # Closing

    def test_the_server_closes_with_a_code_and_reason(self):
        async def go():
            async with websockets.connect(self.url("/ws/small")) as ws:
                await ws.send("close")
                with self.assertRaises(websockets.ConnectionClosed):
                    await ws.recv()
                self.assertEqual(ws.close_code, 4000)
                self.assertEqual(ws.close_reason, "asked to")
        run(go())

    def test_a_client_close_is_echoed_and_tcp_closed(self):
        ws = RawWs(self.port, "/ws/plain")
        ws.head()
        ws.send(8, struct.pack("!H", 4321) + b"bye")
        self.assertEqual(ws.close_code(), 4321)
        self.assertTrue(ws.eof())
        ws.close()

    def test_too_large_a_message_is_1009(self):
        ws = RawWs(self.port, "/ws/small")  # max_message 1024
        ws.head()
        ws.send(2, b"x" * 2000)
        self.assertEqual(ws.close_code(), 1009)
        ws.close()
        ws = RawWs(self.port, "/ws/small")  # also when only the fragments add up past it
        ws.head()
        ws.send(2, b"x" * 600, fin=False)
        ws.send(0, b"x" * 600)
        self.assertEqual(ws.close_code(), 1009)
        ws.close()

    def test_text_that_is_not_utf8_is_1007(self):
        for frames in ([(1, "\xff".encode("latin-1"), True)],
                       [(1, b"\xe2\x82", False), (0, b"\x28", True)],  # broken across fragments
                       [(1, b"\xed\xa0\x80", True)]):  # a surrogate
            ws = RawWs(self.port, "/ws/plain")
            ws.head()
            for opcode, payload, fin in frames:
                ws.send(opcode, payload, fin=fin)
            self.assertEqual(ws.close_code(), 1007, frames)
            ws.close()
        ws = RawWs(self.port, "/ws/plain")  # a character split across fragments is fine
        ws.head()
        ws.send(1, b"\xe2\x82", fin=False)
        ws.send(0, b"\xac")
        self.assertEqual(ws.recv_frame()[3], "€".encode())
        ws.close()

    def test_protocol_errors_are_1002(self):
        cases = [RawWs.frame(1, b"x", rsv=0x20),            # a reserved bit
                 RawWs.frame(3, b"x"),                      # an unknown opcode
                 RawWs.frame(0, b"x"),                      # a continuation with no message
                 RawWs.frame(9, b"x" * 126),                # a control frame too long
                 struct.pack("!BB", 0x81, 5) + b"hello"]   # unmasked
        for raw in cases:
            ws = RawWs(self.port, "/ws/plain")
            ws.head()
            ws.s.sendall(raw)
            self.assertEqual(ws.close_code(), 1002, raw)
            ws.close()

    # Liveness and backpressure

    def test_a_quiet_client_is_pinged_and_closed_if_it_does_not_answer(self):
        ws = RawWs(self.port, "/ws/small")  # ping_interval 400 ms
        ws.head()
        start = time.monotonic()
        f = ws.recv_frame(timeout=3)
        self.assertEqual(f[2], 9, "expected a ping")
        self.assertLess(time.monotonic() - start, 2.0)
        ws.send(10, f[3])  # answered: stays open through the next interval
        f = ws.recv_frame(timeout=3)
        self.assertEqual(f[2], 9, "expected another ping")
        # Not answered this time: the server drops the connection.
        self.assertTrue(ws.eof(timeout=3))
        ws.close()

    def test_a_reader_that_stops_is_cut_and_others_are_served(self):
        ws = RawWs(self.port, "/ws/small")  # max_backlog 256 KiB
        ws.head()
        ws.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        ws.send(1, b"flood 2000")  # 32 MiB of messages, never read
        time.sleep(0.5)

        async def other():
            async with websockets.connect(self.url("/ws/plain")) as w:
                await w.send("still here")
                self.assertEqual(await w.recv(), "still here")
        run(other())
        # The server gave up on the slow reader: reading now ends in EOF or a reset,
        # after at most what its buffers held (far less than 32 MiB).
        got = 0
        ws.s.settimeout(5)
        try:
            while True:
                data = ws.s.recv(1 << 20)
                if not data:
                    break
                got += len(data)
        except ConnectionResetError:
            pass
        self.assertLess(got, 8 << 20)
        ws.close()
        self.assert_server_alive()

    def test_thousands_of_messages_in_flight(self):
        async def go():
            async with websockets.connect(self.url("/ws/echo")) as ws:
                for i in range(3000):
                    await ws.send("m%d" % i)
                for i in range(3000):
                    self.assertEqual(await ws.recv(), "m%d" % i)
        run(go())


class TopicsAcrossWorkersTest(harness.ServerTestCase):
    """Two worker processes: a message published in a room reaches every member,
    whichever worker each is connected to."""
    server_args = ("--workers", "2")

    def test_a_room_spans_worker_processes(self):
        async def go():
            url = "ws://%s:%d/ws/room/lobby" % (HOST, self.port)
            clients, pids = [], set()
            for _ in range(24):  # SO_REUSEPORT spreads them; stop once both workers have some
                ws = await websockets.connect(url)
                hello = await ws.recv()
                pids.add(hello.split(" pid ")[1])
                clients.append(ws)
                if len(pids) == 2 and len(clients) >= 4:
                    break
            self.assertEqual(len(pids), 2, "every connection landed on one worker")
            await asyncio.sleep(0.2)
            await clients[0].send("hello room")
            for ws in clients:
                self.assertEqual(await asyncio.wait_for(ws.recv(), 5), "hello room")
            for ws in clients:
                await ws.close()
        run(go(), timeout=30)


class GracefulStopTest(harness.ServerTestCase):
    server_args = ("--workers", "1")

    def test_a_stop_closes_with_1001(self):
        ws = RawWs(self.port, "/ws/plain")
        ws.head()
        ws.send(1, b"hi")
        self.assertEqual(ws.recv_frame()[3], b"hi")
        self.server.proc.send_signal(15)
        self.assertEqual(ws.close_code(timeout=5), 1001)
        ws.send(8, struct.pack("!H", 1001))
        self.assertTrue(ws.eof())
        ws.close()
        self.assertEqual(self.server.proc.wait(timeout=10), 0)

    def tearDown(self):
        pass  # the server stops inside the test


if __name__ == "__main__":
    harness.main()
