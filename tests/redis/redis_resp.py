"""A minimal Redis client for tests (stdlib only): one connection, RESP2, blocking."""

import socket


class Redis:
    def __init__(self, url, timeout=3.0):
        rest = url[len("redis://"):]
        host, _, port = rest.partition("/")[0].rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def command(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))
        return self._reply()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("Redis closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("Redis closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise RuntimeError("unexpected RESP: %r" % line)

    def calls(self, command):
        """How often `command` ran on the server (INFO commandstats)."""
        info = self.command("INFO", "commandstats").decode()
        for line in info.splitlines():
            if line.startswith("cmdstat_%s:" % command.lower()):
                return int(line.split("calls=")[1].split(",")[0])
        return 0
