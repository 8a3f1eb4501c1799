"""Topics across nodes (topics.store = "redis"), end to end: two nodes (separate
servers of two worker processes each, nothing shared but Redis) with WebSocket rooms.

Run through redis_server.py (KILN_TEST_REDIS_URL, KILN_TEST_REDIS_CTL). Checked: a
message published on one node reaches every member of the room on both nodes, the
sender included, and nobody twice; a topic's message goes to its own room only; while
Redis is down the servers keep serving (a publish is lost, nothing else); once Redis
is back, the rooms carry messages again without a restart; a publish off the event
loops (a pool thread) arrives from a node with no subscriber; apps on two databases
of one Redis do not hear each other; node-wide topics (the default) stay on their node."""

import asyncio
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

import harness  # noqa: E402

harness.require_modules(["websockets"], "python3-websockets", "test_topics_redis")

import websockets  # noqa: E402

URL = os.environ.get("KILN_TEST_REDIS_URL", "")
CTL = os.environ.get("KILN_TEST_REDIS_CTL", "")


async def join(port, room, name):
    ws = await websockets.connect("ws://127.0.0.1:%d/ws/room/%s?name=%s" % (port, room, name))
    hello = await asyncio.wait_for(ws.recv(), 5)
    assert hello.startswith("joined " + room), hello
    return ws


async def quiet(ws, seconds=0.3):
    """True if nothing arrives on ws for `seconds`."""
    try:
        await asyncio.wait_for(ws.recv(), seconds)
        return False
    except asyncio.TimeoutError:
        return True


class TopicsThroughRedis(unittest.TestCase):
    def start_nodes(self, store, args=(["--workers", "2"], ["--workers", "2"]), urls=None):
        if not URL or not CTL:
            self.fail("KILN_TEST_REDIS_URL / KILN_TEST_REDIS_CTL not set: run through tests/redis/redis_server.py")
        nodes = []
        for i, node_args in enumerate(args):
            env = {"KILN_TOPICS_STORE": store, "KILN_REDIS_URL": urls[i] if urls else URL,
                   "KILN_REDIS_PREFIX": "t%d:" % os.getpid()}
            node = harness.ServerProcess(harness.BINARIES["server"], node_args, threads=1, env=env)
            self.addCleanup(harness.check_clean_stop, node)
            node.start()
            nodes.append(node)
        return nodes

    def ctl(self, action):
        self.assertEqual(subprocess.call(CTL + " " + action, shell=True, timeout=60), 0)

    def test_rooms_span_nodes_and_survive_a_redis_restart(self):
        a, b = self.start_nodes("redis")

        async def go():
            members = [await join(a.port, "lobby", "a%d" % i) for i in range(3)]
            members += [await join(b.port, "lobby", "b%d" % i) for i in range(3)]
            other = await join(b.port, "kitchen", "cook")
            await asyncio.sleep(0.3 * harness.TIME_SCALE)  # every loop's subscription took effect

            await members[0].send("from node a")
            for ws in members:
                self.assertEqual(await asyncio.wait_for(ws.recv(), 5), "from node a")
            await members[4].send("from node b")
            for ws in members:
                self.assertEqual(await asyncio.wait_for(ws.recv(), 5), "from node b")
            self.assertTrue(await quiet(other))  # another room hears nothing
            for ws in members:
                self.assertTrue(await quiet(ws, 0.1))  # and nobody got a copy twice

            # Redis goes away: the nodes keep serving; what is published meanwhile is lost.
            self.ctl("stop")
            await members[1].send("while redis is down")
            with harness.RawConnection(a.port) as c:
                self.assertEqual(c.request("GET", "/plaintext").status, 200)
            self.ctl("start")
            deadline = time.monotonic() + 15
            got = None
            while time.monotonic() < deadline and got is None:  # resubscribed by itself, soon
                await members[2].send("after the restart")
                try:
                    got = await asyncio.wait_for(members[3].recv(), 1)
                except asyncio.TimeoutError:
                    pass
            self.assertEqual(got, "after the restart")
            for ws in members + [other]:
                await ws.close()

        asyncio.run(asyncio.wait_for(go(), 60))

    def test_a_publish_off_the_loops_of_a_node_without_subscribers_arrives(self):
        # Node a: one worker process in the hybrid model, no WebSocket on it; a plain
        # handler publishes from a pool thread. The message went to a loop with
        # subscribers only, and there was none: it was dropped (a log line).
        a, b = self.start_nodes("redis", (["--workers", "1", "--mpm", "hybrid"], ["--workers", "2"]))

        async def go():
            on_b = await join(b.port, "lobby", "b")
            await asyncio.sleep(0.3 * harness.TIME_SCALE)
            with harness.RawConnection(a.port) as c:
                r = c.request("POST", "/publish/lobby", body=b"from a pool thread")
                self.assertEqual(r.status, 200)
            self.assertEqual(await asyncio.wait_for(on_b.recv(), 5), "from a pool thread")
            await on_b.close()

        asyncio.run(asyncio.wait_for(go(), 30))

    def test_apps_on_two_databases_of_one_redis_do_not_hear_each_other(self):
        # Pub/sub spans the Redis server, not its numbered databases: two apps kept
        # apart by /1 and /2 (staging, production) heard each other's rooms.
        base = URL.split("?")[0].rstrip("/")
        if base.rsplit("/", 1)[-1].isdigit() and base.count("/") > 2:
            base = base.rsplit("/", 1)[0]
        a, b = self.start_nodes("redis", urls=[base + "/1", base + "/2"])

        async def go():
            on_a = await join(a.port, "lobby", "a")
            on_b = await join(b.port, "lobby", "b")
            await asyncio.sleep(0.3 * harness.TIME_SCALE)
            await on_a.send("staging only")
            self.assertEqual(await asyncio.wait_for(on_a.recv(), 5), "staging only")  # through Redis
            self.assertTrue(await quiet(on_b, 0.5))
            await on_a.close()
            await on_b.close()

        asyncio.run(asyncio.wait_for(go(), 30))

    def test_node_wide_topics_stay_on_their_node(self):
        a, b = self.start_nodes("node")

        async def go():
            on_a = await join(a.port, "lobby", "a")
            on_b = await join(b.port, "lobby", "b")
            await asyncio.sleep(0.2)
            await on_a.send("only node a")
            self.assertEqual(await asyncio.wait_for(on_a.recv(), 5), "only node a")
            self.assertTrue(await quiet(on_b, 0.5))
            await on_a.close()
            await on_b.close()

        asyncio.run(asyncio.wait_for(go(), 30))


if __name__ == "__main__":
    harness.main()
