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
import signal
import socket
import stat
import struct
import sys
import threading
import time
import unittest
import zlib

import harness

harness.require_modules(["websockets", "h2.connection"], "python3-websockets python3-h2", "test_websocket")

import h2.config  # noqa: E402
import h2.connection  # noqa: E402
import h2.events  # noqa: E402
import h2.settings  # noqa: E402
import websockets  # noqa: E402
from hyperframe.frame import DataFrame, Frame, GoAwayFrame, HeadersFrame, RstStreamFrame  # noqa: E402

HOST = "127.0.0.1"
KEY = "dGhlIHNhbXBsZSBub25jZQ=="


def accept_for(key):
    return base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()


def post(port, target):
    """One POST without a body on a connection of its own: the response."""
    with harness.RawConnection(port, timeout=10) as c:
        c.send(harness.build_request("POST", target, body=b""))
        return c.read_response(timeout=10)


def run(coro, timeout=20):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def take_frame(buf):
    """((fin, rsv1, opcode, payload), rest) for a whole server frame at buf's start, or
    (None, buf)."""
    if len(buf) < 2:
        return None, buf
    b0, b1 = buf[0], buf[1]
    if b1 & 0x80:
        raise AssertionError("a server frame is masked")
    n, at = b1 & 0x7F, 2
    if n == 126:
        if len(buf) < 4:
            return None, buf
        n, at = struct.unpack("!H", buf[2:4])[0], 4
    elif n == 127:
        if len(buf) < 10:
            return None, buf
        n, at = struct.unpack("!Q", buf[2:10])[0], 10
    if len(buf) < at + n:
        return None, buf
    return (bool(b0 & 0x80), bool(b0 & 0x40), b0 & 0x0F, buf[at:at + n]), buf[at + n:]


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
            f, self.buf = take_frame(self.buf)
            if f:
                return f
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


class H2Ws:
    """WebSockets over one HTTP/2 connection (RFC 8441; h2c with prior knowledge) on the
    h2 library's state machine: each an extended CONNECT stream carrying masked frames."""

    def __init__(self, port):
        self.s = socket.create_connection((HOST, port), timeout=5)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.streams = {}
        self.settings = {}
        self.eof = False
        self.flush()
        self.pump(lambda: self.settings, "the server's SETTINGS")

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.s.sendall(data)

    def pump(self, until, what, timeout=5):
        deadline = time.monotonic() + timeout
        while not until():
            if self.eof:
                raise AssertionError("the connection closed while waiting for " + what)
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("timed out waiting for " + what)
            self.s.settimeout(left)
            try:
                data = self.s.recv(1 << 20)
            except socket.timeout:
                continue
            except ConnectionResetError:
                data = b""
            if not data:
                self.eof = True
                continue
            for ev in self.conn.receive_data(data):
                self.handle(ev)
            self.flush()

    def handle(self, ev):
        st = self.streams.get(getattr(ev, "stream_id", None))
        if isinstance(ev, h2.events.RemoteSettingsChanged):
            self.settings.update({int(k): v.new_value for k, v in ev.changed_settings.items()})
        elif isinstance(ev, h2.events.ResponseReceived):
            st["headers"] = dict(ev.headers)
            st["status"] = int(st["headers"][":status"])
        elif isinstance(ev, h2.events.DataReceived):
            st["buf"] += ev.data
            if ev.flow_controlled_length:
                self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        elif isinstance(ev, h2.events.StreamEnded):
            st["ended"] = True
        elif isinstance(ev, h2.events.StreamReset) and st is not None:
            st["reset"] = ev.error_code

    def open(self, path, headers=(), method="CONNECT", protocol="websocket"):
        """The stream's id, once the server answered (self.streams[id]["status"])."""
        sid = self.conn.get_next_available_stream_id()
        st = self.streams[sid] = {"status": None, "headers": {}, "buf": b"", "ended": False, "reset": None}
        fields = [(":method", method)] + ([(":protocol", protocol)] if protocol else [])
        fields += [(":scheme", "http"), (":path", path), (":authority", "127.0.0.1:%d" % self.s.getpeername()[1])]
        if not any(n == "sec-websocket-version" for n, _ in headers):
            fields.append(("sec-websocket-version", "13"))
        fields += list(headers)
        self.conn.send_headers(sid, fields, end_stream=method != "CONNECT")
        self.flush()
        self.pump(lambda: st["status"] is not None or st["reset"] is not None, "the answer to stream %d" % sid)
        return sid

    def send(self, sid, opcode, payload=b"", **kw):
        data = RawWs.frame(opcode, payload, **kw)
        off = 0
        while off < len(data):
            room = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size, len(data) - off)
            if room <= 0:
                self.pump(lambda: self.conn.local_flow_control_window(sid) > 0, "a WINDOW_UPDATE")
                continue
            self.conn.send_data(sid, data[off:off + room])
            off += room
            self.flush()

    def end(self, sid):
        self.conn.end_stream(sid)
        self.flush()

    def recv_frame(self, sid, timeout=5):
        """(fin, rsv1, opcode, payload), or None once the stream ended or was reset."""
        st, got = self.streams[sid], []

        def ready():
            f, st["buf"] = take_frame(st["buf"])
            if f:
                got.append(f)
            return got or st["ended"] or st["reset"] is not None
        self.pump(ready, "a frame on stream %d" % sid, timeout)
        return got[0] if got else None

    def close(self):
        self.s.close()


def read_h2_frames(sock, enough, timeout=5):
    """HTTP/2 frames parsed by hand until enough(frames) or EOF; fails on a timeout."""
    buf, frames = b"", []
    deadline = time.monotonic() + timeout
    while not enough(frames):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError("timed out reading HTTP/2 frames: %r" % frames)
        sock.settimeout(left)
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            data = b""
        if not data:
            break
        buf += data
        while len(buf) >= 9:
            frame, length = Frame.parse_frame_header(memoryview(buf[:9]))
            if len(buf) < 9 + length:
                break
            frame.parse_body(memoryview(buf[9:9 + length]))
            frames.append(frame)
            buf = buf[9 + length:]
    return frames


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

    def test_a_head_of_a_websocket_route_gets_no_101(self):
        # HEAD falls back to the GET route, whose handshake answered 101 on a
        # connection that then stayed HTTP: the client took it as switched.
        with self.connect() as c:
            r = c.request("HEAD", "/ws/echo", [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                                ("Sec-WebSocket-Key", KEY), ("Sec-WebSocket-Version", "13")])
            self.assertEqual(r.status, 400)
            self.assertIsNone(r.header("upgrade"))
            # Nor is its open callback run: a client that never switched got an open
            # and never a close (presence counts, "joined" messages).
            before = c.request("GET", "/ws-counts").body
            r = c.request("HEAD", "/ws/counted", [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                                   ("Sec-WebSocket-Key", KEY), ("Sec-WebSocket-Version", "13")])
            self.assertEqual(r.status, 400)
            self.assertEqual(c.request("GET", "/ws-counts").body, before)

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

    def test_a_coroutine_that_throws_a_non_exception_closes_its_client_alone(self):
        # It escaped the coroutine's frame, and std::terminate ended the worker and
        # every connection on it.
        async def go():
            async with websockets.connect(self.url("/ws/echo-co")) as ws:
                await ws.send("throw 42")
                with self.assertRaises(websockets.exceptions.ConnectionClosedError):
                    await ws.recv()
                self.assertEqual(ws.close_code, 1011)
        run(go())
        self.assert_server_alive()

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
            async with websockets.connect(self.url("/ws/small")) as ws:
                await ws.send("close long")  # cut to 123 bytes at a character's start
                with self.assertRaises(websockets.ConnectionClosed):
                    await ws.recv()
                self.assertEqual(ws.close_code, 4001)
                self.assertEqual(ws.close_reason, "xx" + "\u00e9" * 60)
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

    def test_after_its_close_a_client_that_only_pings_is_cut(self):
        # The server closed (4000); the client ignores it and pings every 0.5 s. Each
        # frame restarted the handshake's 2 s, so the connection stayed for ever.
        ws = RawWs(self.port, "/ws/small")
        ws.head()
        ws.send(1, b"close")
        self.assertEqual(ws.close_code(), 4000)
        start, cut = time.monotonic(), False
        for _ in range(16):
            try:
                ws.send(9, b"p")
            except OSError:
                cut = True
                break
            if ws.eof(timeout=0.5):
                cut = True
                break
        self.assertTrue(cut, "the connection outlived its close by 8 s")
        self.assertLess(time.monotonic() - start, 5)
        ws.close()

    def test_a_drain_callback_that_cuts_its_client_leaves_the_server_serving(self):
        # The client catches up, the drain callback sends past max_backlog, and the
        # connection closes inside the flush that called it: nothing of it may stay on
        # the loop's timers (ASan saw the use after free).
        for _ in range(3):
            ws = RawWs(self.port, "/ws/cut-on-drain")
            ws.head()
            ws.send(1, b"fill")
            time.sleep(0.3)  # the server fills the sockets' buffers: its writes block
            ws.s.settimeout(5)
            got = 0
            try:
                while True:
                    data = ws.s.recv(1 << 16)
                    if not data:
                        break
                    got += len(data)
            except (ConnectionResetError, socket.timeout):
                pass
            ws.close()
            self.assertGreater(got, 0)
        time.sleep(2.5)  # past the linger timer (2 s) the cut connections armed
        self.assert_server_alive()

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


def inflate_strictly(data, bits):
    """A permessage-deflate payload inflated through a window of 2^bits only: a little
    output at a time, so a reference further back than the window is an error (into one
    large output buffer, zlib would resolve it from the output)."""
    d, out, rest = zlib.decompressobj(-bits), b"", data + b"\x00\x00\xff\xff"
    while rest:
        out += d.decompress(rest, 64)
        rest = d.unconsumed_tail
    return out


class BurstEchoTest(harness.ServerTestCase):
    server_args = ("--workers", "0", "--threads", "1")

    def test_a_burst_past_the_output_bound_is_echoed_whole(self):
        # Reading stops while the output passes its bound (1 MiB) and must resume once
        # it drains, or the rest of the burst waits in the socket for the client's next
        # frame (or the next ping, 30 s on). With the defaults the output's write share
        # (2 MiB) yields first and the deferred flush resumes reading, so this passed
        # before ws_read resumed by itself too: it guards the burst, not that path.
        ws = RawWs(self.port, "/ws/echo")  # (its backlog bound is 64 MiB: no cut here)
        ws.head()
        payload = os.urandom(4096).hex().encode()  # 8 KiB of text
        burst = b"".join(RawWs.frame(1, payload) for _ in range(300))  # 2.4 MiB
        sender = threading.Thread(target=ws.s.sendall, args=(burst,))
        sender.start()
        got = 0
        deadline = time.monotonic() + 5
        while got < 300 and time.monotonic() < deadline:
            f = ws.recv_frame(timeout=max(0.1, deadline - time.monotonic()))
            if f is None:
                break
            self.assertEqual(f[3], payload)
            got += 1
        sender.join()
        self.assertEqual(got, 300, "the echoes stopped: the rest of the burst was not read")
        ws.s.close()


class TopicCodingTest(harness.ServerTestCase):
    """One loop, so every subscriber is in one delivery."""
    server_args = ("--workers", "0", "--threads", "1")

    def test_a_published_message_reaches_each_subscriber_coded_for_it(self):
        # A topic's message is compressed once per deflate setting, not once per
        # subscriber: each must still get it coded as it negotiated. 2,000 random bytes
        # twice: 15-bit windows reach back to the first copy, 9-bit ones cannot, so a
        # 9-bit client handed the 15-bit coding could not inflate it.
        block = os.urandom(1000).hex().encode()
        message = block + block
        ext = b"Sec-WebSocket-Extensions: permessage-deflate%s\r\n"
        # The 15-bit subscriber first: a coding shared regardless of the setting would
        # reach the 9-bit ones.
        clients = [(RawWs(self.port, "/ws/room/coded", ext % b""), 15),
                   (RawWs(self.port, "/ws/room/coded", ext % b"; server_max_window_bits=9"), 9),
                   (RawWs(self.port, "/ws/room/coded", ext % b"; server_max_window_bits=9"), 9),
                   (RawWs(self.port, "/ws/room/coded"), 0)]
        for ws, _ in clients:
            ws.head()
            f = ws.recv_frame()  # "joined ..."
            self.assertIsNotNone(f)
        clients[3][0].send(1, message)
        for ws, bits in clients:
            f = ws.recv_frame()
            self.assertIsNotNone(f, bits)
            self.assertEqual(f[1], bits != 0, bits)  # rsv1: compressed
            self.assertEqual(inflate_strictly(f[3], bits) if bits else f[3], message, bits)
            ws.close()


class OverHttp2Test(harness.ServerTestCase):
    """RFC 8441: a WebSocket on an HTTP/2 stream (extended CONNECT), beside the
    connection's other streams."""
    server_args = ("--workers", "1")

    def test_the_server_allows_extended_connect(self):
        c = H2Ws(self.port)
        self.assertEqual(c.settings.get(0x8), 1)  # SETTINGS_ENABLE_CONNECT_PROTOCOL
        c.close()

    def test_echo_on_streams_side_by_side_with_a_request(self):
        c = H2Ws(self.port)
        a = c.open("/ws/echo")
        b = c.open("/ws/echo-co")
        for sid in (a, b):
            self.assertEqual(c.streams[sid]["status"], 200)
            self.assertNotIn("sec-websocket-accept", c.streams[sid]["headers"])
            self.assertNotIn("upgrade", c.streams[sid]["headers"])
        c.send(a, 1, "héllo".encode())
        c.send(b, 1, b"sleep")
        c.send(b, 2, b"\x00\xff")
        plain = c.open("/plaintext", method="GET", protocol=None)  # a request between them
        self.assertEqual(c.streams[plain]["status"], 200)
        self.assertEqual(c.recv_frame(a)[2:], (1, "héllo".encode()))
        self.assertEqual(c.recv_frame(b)[2:], (1, b"sleep"))
        self.assertEqual(c.recv_frame(b)[2:], (2, b"\x00\xff"))
        big = os.urandom(1 << 20)  # past every window both ways
        c.send(a, 2, big)
        self.assertEqual(c.recv_frame(a, timeout=10)[2:], (2, big))
        # The closing handshake: our close echoed, then END_STREAM both ways.
        c.send(a, 8, struct.pack("!H", 4321) + b"bye")
        self.assertEqual(c.recv_frame(a)[2:], (8, struct.pack("!H", 4321)))
        self.assertIsNone(c.recv_frame(a))
        self.assertTrue(c.streams[a]["ended"])
        c.end(a)
        c.send(b, 1, b"still")  # the other WebSocket lives on
        self.assertEqual(c.recv_frame(b)[2:], (1, b"still"))
        c.close()

    def shut_window_ws(self, path):
        """A WebSocket stream on a connection whose stream windows are 0: nothing the
        server writes on it can leave until the client opens them."""
        c = H2Ws(self.port)
        c.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
        c.flush()
        sid = c.open(path)
        self.assertEqual(c.streams[sid]["status"], 200)
        return c, sid

    def test_pings_whose_pongs_cannot_leave_cut_the_client(self):
        # A window of 0: no pong can leave, and each ping queued another; past
        # max_backlog (256 KiB on /ws/small) the client is cut (the stream reset), as a
        # reader that does not read is, instead of the server's memory growing.
        c, sid = self.shut_window_ws("/ws/small")
        ping = b"p" * 125
        sent = 0
        deadline = time.monotonic() + 3  # pings keep coming: the ping interval never cuts it
        while c.streams[sid]["reset"] is None and not c.eof and time.monotonic() < deadline:
            c.send(sid, 9, ping)
            sent += 1
            if sent % 100 == 0:
                try:
                    c.pump(lambda: c.streams[sid]["reset"] is not None, "the stream's reset", timeout=0.001)
                except AssertionError:
                    pass
        self.assertIsNotNone(c.streams[sid]["reset"], "still open after %d pings" % sent)
        self.assertLess(sent, 4000)  # 256 KiB of pongs is 2,064 pings, and a few in flight
        c.close()
        self.assert_server_alive()

    def test_drained_resumes_after_a_backlog_of_pongs(self):
        # A backlog past the drain mark made of pongs alone (a window of 0 holds them):
        # drained() waits, and resumes once the window opens and they leave.
        c, sid = self.shut_window_ws("/ws/echo-co")
        for _ in range(700):  # 700 x 127 bytes of pongs: past the 64 KiB mark
            c.send(sid, 9, b"p" * 125)
        c.send(sid, 1, b"drained")
        time.sleep(0.2)
        c.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 24})
        c.conn.increment_flow_control_window(1 << 24)
        c.flush()
        while True:  # the pongs, then the echo that comes after drained()
            f = c.recv_frame(sid, timeout=5)
            self.assertIsNotNone(f, "the stream ended")
            if f[2] != 10:
                break
        self.assertEqual(f[2:], (1, b"drained"))
        c.close()

    def closed_by_the_server(self):
        """A WebSocket stream on /ws/small the server closed (4000): (client, stream, close frame)."""
        c = H2Ws(self.port)
        sid = c.open("/ws/small")
        c.send(sid, 1, b"close")
        f = c.recv_frame(sid)
        self.assertEqual(f[2], 8)
        self.assertEqual(struct.unpack("!H", f[3][:2])[0], 4000)
        return c, sid, f

    def test_the_server_closes_with_its_code_and_ends_the_stream(self):
        c, sid, f = self.closed_by_the_server()
        c.send(sid, 8, f[3][:2])
        c.end(sid)
        self.assertIsNone(c.recv_frame(sid))
        self.assertTrue(c.streams[sid]["ended"])
        self.assertIsNone(c.streams[sid]["reset"])
        c.close()

    def test_after_its_close_a_client_that_only_pings_is_cut(self):
        c, sid, _ = self.closed_by_the_server()
        st = c.streams[sid]

        def over():
            return st["ended"] or st["reset"] is not None
        start = time.monotonic()
        for _ in range(16):
            if over():
                break
            c.send(sid, 9, b"p")
            try:
                c.pump(over, "the stream's end", 0.5)
            except AssertionError:
                pass
        self.assertTrue(over(), "the stream outlived its close by 8 s")
        self.assertLess(time.monotonic() - start, 5)
        c.close()

    def test_limits_and_protocol_errors_hold_on_a_stream(self):
        c = H2Ws(self.port)
        sid = c.open("/ws/small")  # max_message 1024
        c.send(sid, 2, b"x" * 2000)
        f = c.recv_frame(sid)
        self.assertEqual((f[2], struct.unpack("!H", f[3][:2])[0]), (8, 1009))
        sid = c.open("/ws/plain")
        c.send(sid, 1, b"\xff")
        f = c.recv_frame(sid)
        self.assertEqual((f[2], struct.unpack("!H", f[3][:2])[0]), (8, 1007))
        sid = c.open("/ws/plain")
        c.send(sid, 3, b"x")  # an unknown opcode
        f = c.recv_frame(sid)
        self.assertEqual((f[2], struct.unpack("!H", f[3][:2])[0]), (8, 1002))
        ok = c.open("/plaintext", method="GET", protocol=None)  # the connection is fine
        self.assertEqual(c.streams[ok]["status"], 200)
        c.close()

    def test_a_quiet_stream_is_pinged_and_reset_if_it_does_not_answer(self):
        c = H2Ws(self.port)
        sid = c.open("/ws/small")  # ping_interval 400 ms
        f = c.recv_frame(sid, timeout=3)
        self.assertEqual(f[2], 9, "expected a ping")
        c.send(sid, 10, f[3])
        self.assertEqual(c.recv_frame(sid, timeout=3)[2], 9, "expected another ping")
        self.assertIsNone(c.recv_frame(sid, timeout=3))  # unanswered: reset
        self.assertEqual(c.streams[sid]["reset"], 0x8)  # CANCEL
        ok = c.open("/plaintext", method="GET", protocol=None)
        self.assertEqual(c.streams[ok]["status"], 200)
        c.close()

    def test_compression_and_subprotocols_are_negotiated_as_on_http1(self):
        c = H2Ws(self.port)
        sid = c.open("/ws/echo", [("sec-websocket-extensions", "permessage-deflate")])
        self.assertIn("permessage-deflate", c.streams[sid]["headers"].get("sec-websocket-extensions", ""))
        c.send(sid, 1, b"a" * 4000)
        fin, rsv1, opcode, payload = c.recv_frame(sid)
        self.assertTrue(rsv1)
        import zlib
        self.assertEqual(zlib.decompressobj(-15).decompress(payload + b"\x00\x00\xff\xff"), b"a" * 4000)
        sid = c.open("/ws/small", [("sec-websocket-protocol", "chat.v1, chat.v2")])
        self.assertEqual(c.streams[sid]["headers"].get("sec-websocket-protocol"), "chat.v2")
        c.close()

    def test_refusals(self):
        c = H2Ws(self.port)
        sid = c.open("/plaintext")  # no WebSocket there: never a 2xx
        self.assertEqual(c.streams[sid]["status"], 400)
        sid = c.open("/no/such/thing")
        self.assertEqual(c.streams[sid]["status"], 404)
        sid = c.open("/ws/echo", method="GET", protocol=None)  # a plain GET on HTTP/2
        self.assertEqual(c.streams[sid]["status"], 426)
        sid = c.open("/ws/small", [("origin", "https://evil.example")])
        self.assertEqual(c.streams[sid]["status"], 403)
        sid = c.open("/ws/echo", [("sec-websocket-version", "8")])
        self.assertEqual(c.streams[sid]["status"], 426)
        c.close()

    def test_a_client_reset_leaves_the_connection_serving(self):
        c = H2Ws(self.port)
        sid = c.open("/ws/echo")
        c.send(sid, 1, b"x" * 10)
        c.conn.reset_stream(sid, 0x8)
        c.flush()
        other = c.open("/ws/echo")
        c.send(other, 1, b"after")
        self.assertEqual(c.recv_frame(other)[2:], (1, b"after"))
        c.close()
        self.assert_server_alive()


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
            # A burst from a plain handler: past the kernel's queue of ten datagrams
            # between two processes, the rest were dropped.
            r = await asyncio.get_running_loop().run_in_executor(
                None, lambda: post(self.port, "/publish/lobby/burst?n=300"))
            for ws in clients:
                got = [await asyncio.wait_for(ws.recv(), 5) for _ in range(300)]
                self.assertEqual(got, [str(i) for i in range(300)])
            for ws in clients:
                await ws.close()
        run(go(), timeout=30)


class BusDirectoryTest(harness.ServerTestCase):
    """The workers' bus is a directory of sockets that only the server's user may use
    (no other user can take a worker's name or send to it), and it goes when the
    supervisor stops."""
    server_args = ("--workers", "2")

    def test_the_bus_is_private_and_goes_with_the_server(self):
        self.assertEqual(post(self.port, "/publish/lobby/burst?n=1").status, 200)  # a worker binds its socket
        pids = self.server.children()
        self.assertEqual(len(pids), 2)
        with open("/proc/%d/environ" % pids[0], "rb") as f:
            env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
        path = env[b"KILN_BUS_DIR"].decode()
        st = os.lstat(path)
        self.assertTrue(stat.S_ISDIR(st.st_mode))
        self.assertEqual(stat.S_IMODE(st.st_mode), 0o700)
        self.assertEqual(st.st_uid, os.geteuid())
        names = os.listdir(path)
        self.assertTrue(names, "no worker's socket in " + path)
        for n in names:
            self.assertTrue(stat.S_ISSOCK(os.lstat(os.path.join(path, n)).st_mode), n)
        self.server.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.server.proc.wait(timeout=10), 0)
        self.assertFalse(os.path.exists(path), path + " is left behind")

    def tearDown(self):
        pass  # the server stops inside the test


class PastTheCap:
    """limits.max_requests_per_connection = 2 over HTTP/2: a WebSocket, then a request
    whose stream reaches the cap (its GOAWAY takes no new stream)."""
    server_args = ("--workers", "1")
    server_env = {"KILN_LIMITS_MAX_REQUESTS_PER_CONNECTION": "2"}

    def websocket_past_the_goaway(self):
        """The client and the WebSocket's stream, which must still echo."""
        c = H2Ws(self.port)
        sid = c.open("/ws/echo")  # stream 1, the first request
        self.assertEqual(c.streams[sid]["status"], 200)
        # The second, by hand: the h2 library stops at a GOAWAY. GET /plaintext in
        # literals that leave the server's HPACK table as it is.
        block = b"\x82\x86\x04\x0a/plaintext\x01\x09127.0.0.1"
        c.s.sendall(HeadersFrame(3, data=block, flags=["END_HEADERS", "END_STREAM"]).serialize())
        frames = read_h2_frames(c.s, lambda fs: any(isinstance(f, GoAwayFrame) for f in fs) and
                                any(f.stream_id == 3 and "END_STREAM" in f.flags for f in fs))
        goaways = [f for f in frames if isinstance(f, GoAwayFrame)]
        self.assertEqual([(f.error_code, f.last_stream_id) for f in goaways], [(0, 3)])
        c.s.sendall(DataFrame(sid, RawWs.frame(1, b"still here")).serialize())
        frames += read_h2_frames(c.s, lambda fs: any(isinstance(f, (DataFrame, RstStreamFrame)) and f.stream_id == sid
                                                     for f in fs))
        data = b"".join(f.data for f in frames if isinstance(f, DataFrame) and f.stream_id == sid)
        first, _ = take_frame(data)
        self.assertIsNotNone(first, "not a whole frame: %r in %r" % (data, frames))
        self.assertEqual(first[2:], (1, b"still here"), "the WebSocket was told to go at the cap: %r" % (first,))
        self.assertFalse(any(isinstance(f, RstStreamFrame) for f in frames), frames)
        return c, sid


class RequestCapTest(PastTheCap, harness.ServerTestCase):
    """The GOAWAY at the cap lets a WebSocket already open live on, as one past the cap
    on its own HTTP/1.1 connection does."""

    def test_a_websocket_lives_on_past_the_goaway(self):
        c, sid = self.websocket_past_the_goaway()
        c.s.sendall(DataFrame(sid, RawWs.frame(1, b"and on")).serialize())
        frames = read_h2_frames(c.s, lambda fs: any(isinstance(f, DataFrame) and f.stream_id == sid for f in fs))
        data = b"".join(f.data for f in frames if isinstance(f, DataFrame) and f.stream_id == sid)
        self.assertEqual(take_frame(data)[0][2:], (1, b"and on"))
        c.close()


class RequestCapFloodTest(PastTheCap, harness.ServerTestCase):
    def test_streams_opened_after_the_goaway_are_paid_for(self):
        # The WebSocket keeps the connection open past the cap; streams opened after the
        # GOAWAY are ignored, and each costs the flood budget (1,000): 1,200 of them in
        # one write end the connection with ENHANCE_YOUR_CALM.
        c, sid = self.websocket_past_the_goaway()
        block = b"\x82\x86\x04\x0a/plaintext\x01\x09127.0.0.1"
        c.s.sendall(b"".join(HeadersFrame(i, data=block, flags=["END_HEADERS", "END_STREAM"]).serialize()
                             for i in range(5, 5 + 2 * 1200, 2)))
        frames = read_h2_frames(c.s, lambda fs: any(isinstance(f, GoAwayFrame) and f.error_code == 0xB for f in fs))
        self.assertEqual([f.last_stream_id for f in frames if isinstance(f, GoAwayFrame)], [3])
        self.assertFalse(any(isinstance(f, (DataFrame, RstStreamFrame)) and f.stream_id > 3 for f in frames), frames[:5])
        c.close()


class RequestCapStopTest(PastTheCap, harness.ServerTestCase):
    def test_a_stop_after_the_caps_goaway_tells_the_websocket_to_go(self):
        c, sid = self.websocket_past_the_goaway()
        self.server.proc.send_signal(15)
        frames = read_h2_frames(c.s, lambda fs: any(isinstance(f, DataFrame) and f.stream_id == sid and f.data
                                                    for f in fs))
        data = b"".join(f.data for f in frames if isinstance(f, DataFrame) and f.stream_id == sid)
        close, _ = take_frame(data)
        self.assertIsNotNone(close, "not a whole frame: %r in %r" % (data, frames))
        self.assertEqual((close[2], struct.unpack("!H", close[3][:2])[0]), (8, 1001))
        c.s.sendall(DataFrame(sid, RawWs.frame(8, struct.pack("!H", 1001)), flags=["END_STREAM"]).serialize())
        read_h2_frames(c.s, lambda fs: False)  # to the connection's end
        c.close()
        self.assertEqual(self.server.proc.wait(timeout=10), 0)

    def tearDown(self):
        pass  # the server stops inside the test


class GracefulStopTest(harness.ServerTestCase):
    server_args = ("--workers", "1")

    def test_a_stop_closes_with_1001(self):
        ws = RawWs(self.port, "/ws/plain")
        ws.head()
        ws.send(1, b"hi")
        self.assertEqual(ws.recv_frame()[3], b"hi")
        c = H2Ws(self.port)  # and one over HTTP/2
        sid = c.open("/ws/plain")
        self.server.proc.send_signal(15)
        self.assertEqual(ws.close_code(timeout=5), 1001)
        ws.send(8, struct.pack("!H", 1001))
        self.assertTrue(ws.eof())
        ws.close()
        # The h2 library stops at a GOAWAY, so the frames after it are read by hand: the
        # GOAWAY, the WebSocket's 1001, and once we answer it, the stream's and the
        # connection's orderly end.
        frames = read_h2_frames(c.s, lambda fs: any(isinstance(f, DataFrame) and f.data for f in fs))
        self.assertTrue(any(isinstance(f, GoAwayFrame) for f in frames))
        data = b"".join(f.data for f in frames if isinstance(f, DataFrame) and f.stream_id == sid)
        close, _ = take_frame(data)
        self.assertEqual((close[2], struct.unpack("!H", close[3][:2])[0]), (8, 1001))
        c.s.sendall(DataFrame(sid, RawWs.frame(8, struct.pack("!H", 1001)), flags=["END_STREAM"]).serialize())
        frames = read_h2_frames(c.s, lambda fs: False)  # to the connection's end
        self.assertFalse(any(isinstance(f, RstStreamFrame) for f in frames), frames)
        c.close()
        self.assertEqual(self.server.proc.wait(timeout=10), 0)

    def tearDown(self):
        pass  # the server stops inside the test


if __name__ == "__main__":
    harness.main()
