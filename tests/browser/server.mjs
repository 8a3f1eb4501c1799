// What the browser tests share: a kiln binary under test, started on a free 127.0.0.1
// port (retried if the port is taken meanwhile), its output kept, stopped by its own
// PID (SIGTERM, then SIGKILL after 5 s); and a run of one test against it in chromium,
// cut off after a time limit, failed by a crash, an unclean stop or a sanitizer report.
import { spawn } from 'node:child_process';
import net from 'node:net';

import { chromium } from 'playwright-core';

export const HOST = '127.0.0.1';
const START_MS = 15_000;  // until the server accepts connections

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, HOST, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const c = net.connect({ host: HOST, port });
    c.setTimeout(500);
    c.once('connect', () => { c.destroy(); resolve(true); });
    c.once('error', () => resolve(false));
    c.once('timeout', () => { c.destroy(); resolve(false); });
  });
}

export class Server {
  // args: flags after --port P; env: extra environment variables.
  constructor(binary, args = [], env = {}) {
    this.binary = binary;
    this.args = args;
    this.env = env;
    this.output = '';
    this.proc = null;
  }

  async start() {
    for (let attempt = 0; attempt < 3; attempt++) {
      this.port = await freePort();
      this.proc = spawn(this.binary, ['--port', String(this.port), ...this.args], {
        env: { ...process.env, ...this.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      this.exited = new Promise((resolve) => this.proc.once('exit', (code, signal) => resolve({ code, signal })));
      for (const stream of [this.proc.stdout, this.proc.stderr])
        stream.on('data', (d) => { this.output = (this.output + d).slice(-20000); });
      const deadline = Date.now() + START_MS;
      while (Date.now() < deadline && this.proc.exitCode === null) {
        if (await canConnect(this.port)) return `http://${HOST}:${this.port}`;
        await new Promise((r) => setTimeout(r, 50));
      }
      await this.stop();
    }
    throw new Error(`${this.binary} did not start:\n${this.output}`);
  }

  async stop() {
    if (!this.proc) return null;
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
      const result = await this.exited;
      clearTimeout(timer);
      return result;
    }
    return this.exited;
  }

  kill() {
    if (this.proc) this.proc.kill('SIGKILL');
  }
}

// Starts `server`, launches chromium (executablePath), runs `run(browser, base)`, then
// stops both. Returns true if everything passed; says why not on stderr.
export async function runBrowserTest({ name, server, executablePath, overallMs, run }) {
  let browser = null;
  let failed = false;
  const fail = (why) => {
    failed = true;
    console.error(`browser test: FAILED: ${why}`);
  };
  const cutoff = setTimeout(() => {
    console.error(`browser test: FAILED: still running after ${overallMs / 1000} s`);
    server.kill();
    process.exit(1);
  }, overallMs);
  try {
    const base = await server.start();
    const root = typeof process.getuid === 'function' && process.getuid() === 0;
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: root ? ['--no-sandbox'] : [],  // chromium refuses to sandbox as root
      timeout: 60_000,
    });
    await run(browser, base);
  } catch (e) {
    fail(`${e.stack || e}\n--- ${name} output ---\n${server.output}`);
  } finally {
    if (browser) await browser.close().catch(() => {});
    const exit = await server.stop();
    if (exit && exit.code !== 0 && !failed)
      fail(`${name} exited with ${JSON.stringify(exit)} after SIGTERM\n${server.output}`);
    if (/Sanitizer|runtime error:/.test(server.output) && !failed)  // ASan/UBSan builds
      fail(`sanitizer report from ${name}\n${server.output}`);
    clearTimeout(cutoff);
  }
  return !failed;
}
