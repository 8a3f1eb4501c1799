// The chat example in a real browser: Debian's chromium, driven by playwright-core,
// opens examples/chat's page several times against build/bin/chat on 2 worker
// processes (--workers 2 --threads 1), until two pages are served by different
// workers (each page shows its worker). Then each types a message, and it appears
// on both pages, the sender's included; a third page on the server-sent events
// fallback (?transport=sse, POST /send) talks with them both ways. A name with
// markup shows as text, one not UTF-8 or with bidi controls as "anonymous", and a
// WebSocket that floods the room is closed. Then,
// against a server on HTTPS (a throwaway certificate), two
// pages talk over WebSockets that Chromium carries on its HTTP/2 connection (RFC
// 8441's extended CONNECT, as the server's access log shows). Saves OUT/chat.png.
//
//   node chat.test.mjs --chat BINARY --out DIR [--chromium /usr/bin/chromium]
// Every wait is bounded; the whole run is cut off after OVERALL_MS.
import assert from 'node:assert/strict';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { runBrowserTest, Server } from './server.mjs';

const OVERALL_MS = 180_000;
const STEP_MS = 15_000;
const MAX_PAGES = 12;  // connections land on workers as the kernel spreads them

const { values: args } = parseArgs({
  options: {
    chat: { type: 'string' },
    out: { type: 'string' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
  },
});
if (!args.chat || !args.out) {
  console.error('usage: node chat.test.mjs --chat BINARY --out DIR [--chromium PATH]');
  process.exit(2);
}

async function open(browser, url) {
  const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
  page.setDefaultTimeout(STEP_MS);
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.worker, null, { timeout: STEP_MS });
  return { page, worker: await page.evaluate(() => document.body.dataset.worker) };
}

async function say(page, text) {
  await page.fill('#text', text);
  await page.click('button[type=submit]');
}

async function sees(page, name, text) {
  const line = page.locator('#log li', { hasText: text });
  await line.first().waitFor({ timeout: STEP_MS });
  assert.equal((await line.first().locator('.name').textContent()), name);
}

async function run(browser, base, outDir) {
  const step = (name) => console.log(`browser test: ${name}`);
  step('pages until two are served by different worker processes');
  const pages = [];
  let a = null;
  let b = null;
  for (let i = 0; i < MAX_PAGES && !b; i++) {
    const p = await open(browser, `${base}/?name=${i === 0 ? 'alice' : 'bob'}`);
    pages.push(p);
    if (!a) a = p;
    else if (p.worker !== a.worker) b = p;
  }
  assert.ok(b, `every page was served by worker ${a.worker}`);
  assert.equal(await a.page.evaluate(() => document.body.dataset.transport), 'websocket');

  step(`alice (worker ${a.worker}) and bob (worker ${b.worker}) talk`);
  await say(a.page, 'hello from alice');
  await sees(a.page, 'alice', 'hello from alice');  // the sender too
  await sees(b.page, 'alice', 'hello from alice');
  await say(b.page, 'hi alice, bob here');
  await sees(a.page, 'bob', 'hi alice, bob here');
  await sees(b.page, 'bob', 'hi alice, bob here');

  step('a page on the server-sent events fallback joins the conversation');
  const c = await open(browser, `${base}/?transport=sse&name=carol`);
  assert.equal(await c.page.evaluate(() => document.body.dataset.transport), 'sse');
  await say(a.page, 'welcome carol');
  await sees(c.page, 'alice', 'welcome carol');
  await say(c.page, 'thanks, I read by events');
  await sees(a.page, 'carol', 'thanks, I read by events');
  await sees(b.page, 'carol', 'thanks, I read by events');

  step('markup in a message is shown as text');
  await say(b.page, '<img src=x onerror="window.pwned=1"><b>bold</b>');
  await sees(a.page, 'bob', '<b>bold</b>');
  assert.equal(await a.page.evaluate(() => window.pwned), undefined);
  assert.equal(await a.page.locator('#log b').count(), 0);

  step('a name that is not UTF-8, or that reorders the text around it, shows as anonymous');
  for (const [raw, said] of [['%FF%FE', 'not utf-8'], ['%E2%80%AEevil', 'reversed'], ['a%0Ab', 'two lines']]) {
    const closed = await a.page.evaluate(([raw, said]) => new Promise((resolve) => {
      const ws = new WebSocket(location.origin.replace(/^http/, 'ws') + '/ws?name=' + raw);
      ws.onopen = () => ws.send('a name ' + said);
      ws.onclose = (e) => resolve(e.code);
      setTimeout(() => { ws.close(); resolve('open'); }, 1_000);
    }), [raw, said]);
    assert.equal(closed, 'open', `the WebSocket named ${raw} was closed`);
    await sees(b.page, 'anonymous', 'a name ' + said);
  }

  step('a WebSocket that floods the room is closed (1008), POSTs past the same allowance get 429, and the room talks on');
  const code = await a.page.evaluate(() => new Promise((resolve) => {
    const ws = new WebSocket(location.origin.replace(/^http/, 'ws') + '/ws?name=flood');
    ws.onopen = () => { for (let i = 0; i < 200; i++) ws.send('flood ' + i); };
    ws.onclose = (e) => resolve(e.code);
    setTimeout(() => resolve('still open after 10 s'), 10_000);
  }));
  assert.equal(code, 1008);
  const statuses = await a.page.evaluate(async () => {  // the fallback's POSTs: the same allowance
    const out = [];
    for (let i = 0; i < 20; i++) {
      const r = await fetch('/send', { method: 'POST', headers: { 'Content-Type': 'application/json' },
                                       body: JSON.stringify({ name: 'flood', text: 'post ' + i }) });
      out.push(r.status);
    }
    return out;
  });
  assert.ok(statuses.slice(0, 5).every((s) => s === 204), statuses.join(','));
  assert.ok(statuses.includes(429), statuses.join(','));
  await say(b.page, 'still here after the flood');
  await sees(a.page, 'bob', 'still here after the flood');

  await a.page.screenshot({ path: path.join(outDir, 'chat.png') });
  for (const p of [...pages, c]) await p.page.close();

  step('over HTTPS the browser speaks HTTP/2, and its WebSockets ride on it (RFC 8441)');
  const tls = new Server(path.resolve(args.chat), ['--workers', '1', '--tls-self-signed', '--access-log', 'stderr']);
  const plainBase = await tls.start();
  try {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });  // the throwaway certificate
    const h2base = plainBase.replace('http://', 'https://');
    const d = await open(context, `${h2base}/?name=dave`);
    const e = await open(context, `${h2base}/?name=erin`);
    assert.equal(await d.page.evaluate(() => document.body.dataset.transport), 'websocket');
    await say(d.page, 'hello over h2');
    await sees(e.page, 'dave', 'hello over h2');
    await say(e.page, 'and back');
    await sees(d.page, 'erin', 'and back');
    await context.close();
  } finally {
    await tls.stop();  // (the access log is written out by then)
  }
  assert.match(tls.output, /"CONNECT \/ws\?name=dave HTTP\/2\.0" 200/,
    `the WebSocket did not come as an extended CONNECT over HTTP/2; access log:\n${tls.output}`);
}

async function main() {
  const chat = new Server(path.resolve(args.chat), ['--workers', '2', '--threads', '1']);
  const passed = await runBrowserTest({
    name: 'chat', server: chat, executablePath: args.chromium, overallMs: OVERALL_MS,
    run: (browser, base) => run(browser, base, path.resolve(args.out)),
  });
  if (passed) console.log(`browser test: passed; screenshot in ${path.join(path.resolve(args.out), 'chat.png')}`);
  process.exit(passed ? 0 : 1);
}

main();
