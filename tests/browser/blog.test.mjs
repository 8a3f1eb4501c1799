// The blog in a real browser: Debian's chromium, driven by playwright-core, uses
// examples/blog the way a person would. It starts build/bin/blog on a free
// 127.0.0.1 port with a temporary database, then: signs up (the header's links
// follow), is sent to the log-in page when logged out, creates a post through the form,
// edits it, sees each flash message, deletes it; checks that the stylesheet applies,
// that a hostile title shows as text (no script runs), that validation keeps the
// input, that a missing post gets the 404 page, and that a form posted without its
// CSRF token gets 403. Saves OUT/blog.png (the edited post with its flash).
//
//   node blog.test.mjs --blog BINARY --out DIR [--chromium /usr/bin/chromium]
// Every wait is bounded; the whole run is cut off after OVERALL_MS.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { runBrowserTest, Server } from './server.mjs';

const OVERALL_MS = 240_000;
const STEP_MS = 15_000;   // one navigation, click or assertion wait

const { values: args } = parseArgs({
  options: {
    blog: { type: 'string' },
    out: { type: 'string' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
  },
});
if (!args.blog || !args.out) {
  console.error('usage: node blog.test.mjs --blog BINARY --out DIR [--chromium PATH]');
  process.exit(2);
}

// ----------------------------------------------------------------- the server


// ----------------------------------------------------------------- the steps

async function expectText(locator, text) {
  await locator.waitFor({ timeout: STEP_MS });
  assert.equal((await locator.textContent()).trim(), text);
}

// Submits the page's form by clicking `button`; returns the final response.
async function submit(page, button) {
  const [response] = await Promise.all([page.waitForNavigation({ timeout: STEP_MS }), page.click(button)]);
  return response;
}

async function run(page, base, outDir) {
  const step = (name) => console.log(`browser test: ${name}`);
  const dialogs = [];
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });

  step('home redirects to the (empty) post list, styled by app.css');
  await page.goto(base + '/');
  assert.equal(new URL(page.url()).pathname, '/posts');
  await expectText(page.locator('h1'), 'Posts');
  await page.getByText('No posts yet').waitFor({ timeout: STEP_MS });
  const headerColour = await page.locator('header.site').evaluate((e) => getComputedStyle(e).backgroundColor);
  assert.equal(headerColour, 'rgb(36, 41, 47)', 'the stylesheet is applied');

  step('logged out: Sign up and Log in links, writing leads to the log-in page');
  assert.equal(await page.locator('header a', { hasText: 'New post' }).count(), 0);
  await page.goto(base + '/posts/new');
  assert.equal(new URL(page.url()).pathname, '/login');
  await expectText(page.locator('.notice'), 'Please log in first.');

  step('sign up through the form: logged in, the header says so');
  await page.click('header >> text=Sign up');
  await page.fill('#user_email', 'ada@example.org');
  await page.fill('#user_name', 'Ada Lovelace');
  await page.fill('#user_password', 'short');
  let response = await submit(page, 'button:has-text("Sign up")');
  assert.equal(response.status(), 422, 'a short password is refused');
  await expectText(page.locator('.field.invalid .error'), 'Password must be at least 8 characters');
  assert.equal(await page.inputValue('#user_email'), 'ada@example.org', 'the address is kept');
  assert.equal(await page.inputValue('#user_password'), '', 'the password is not sent back');
  await page.fill('#user_password', 'correct horse battery');
  response = await submit(page, 'button:has-text("Sign up")');
  assert.equal(response.status(), 200);
  await expectText(page.locator('.notice'), 'Welcome, Ada Lovelace!');
  await expectText(page.locator('header .who'), 'Ada Lovelace');

  step('create a post through the form');
  await page.click('text=New post');
  assert.equal(new URL(page.url()).pathname, '/posts/new');
  await page.fill('#post_title', 'Hello from Chromium');
  await page.fill('#post_body', 'Written by a real browser.\nTwo lines.');
  response = await submit(page, 'button:has-text("Create post")');
  assert.equal(response.status(), 200);
  assert.match(new URL(page.url()).pathname, /^\/posts\/\d+$/);
  const postPath = new URL(page.url()).pathname;
  await expectText(page.locator('.notice'), 'Post created');
  await expectText(page.locator('article h1'), 'Hello from Chromium');
  await expectText(page.locator('article .body'), 'Written by a real browser.\nTwo lines.');

  step('the post is on the list');
  await page.click('text=Back to posts');
  await page.locator(`a[href="${postPath}"]`, { hasText: 'Hello from Chromium' }).waitFor({ timeout: STEP_MS });

  step('edit it and see the flash');
  await page.click(`a[href="${postPath}"]`);
  await page.click('text=Edit');
  assert.equal(await page.inputValue('#post_title'), 'Hello from Chromium');
  await page.fill('#post_title', 'Edited in Chromium');
  response = await submit(page, 'button:has-text("Update post")');
  assert.equal(response.status(), 200);
  assert.equal(new URL(page.url()).pathname, postPath);
  await expectText(page.locator('.notice'), 'Post updated');
  await expectText(page.locator('article h1'), 'Edited in Chromium');
  const shot = path.join(outDir, 'blog.png');
  await page.screenshot({ path: shot, fullPage: true });
  assert.ok(fs.statSync(shot).size > 1000, 'the screenshot has content');

  step('reload: a flash is shown once');
  await page.reload();
  assert.equal(await page.locator('.notice').count(), 0);

  step('delete it');
  response = await submit(page, 'button:has-text("Delete")');
  assert.equal(response.status(), 200);
  assert.equal(new URL(page.url()).pathname, '/posts');
  await expectText(page.locator('.notice'), 'Post deleted');
  assert.equal(await page.locator(`a[href="${postPath}"]`).count(), 0);
  response = await page.goto(base + postPath);
  assert.equal(response.status(), 404, 'the deleted post is gone');
  await expectText(page.locator('h1'), 'Not found');

  step('a hostile title shows as text and runs nothing');
  const hostile = '<script>alert(1)</script><img src=x onerror=alert(2)>';
  await page.goto(base + '/posts/new');
  await page.fill('#post_title', hostile);
  await page.fill('#post_body', '<b>not bold</b>');
  await submit(page, 'button:has-text("Create post")');
  await expectText(page.locator('article h1'), hostile);
  await expectText(page.locator('article .body'), '<b>not bold</b>');
  assert.equal(await page.locator('article b').count(), 0);
  assert.equal(await page.title(), `${hostile} · kiln blog`);
  assert.deepEqual(dialogs, [], 'no script ran');

  // -- error paths ----------------------------------------------------------------

  step('a blank title is refused with the body kept (422)');
  await page.goto(base + '/posts/new');
  await page.fill('#post_body', 'Keep this text');
  response = await submit(page, 'button:has-text("Create post")');
  assert.equal(response.status(), 422);
  await expectText(page.locator('.field.invalid .error'), "Title can't be blank");
  assert.equal(await page.inputValue('#post_body'), 'Keep this text');

  step('a form posted without its CSRF token gets 403');
  await page.goto(base + '/posts/new');
  await page.fill('#post_title', 'Forged post');
  await page.fill('#post_body', 'no token');
  await page.evaluate(() => document.querySelector('form[action="/posts"] input[name="_csrf"]').remove());
  response = await submit(page, 'button:has-text("Create post")');
  assert.equal(response.status(), 403);
  assert.match(await page.textContent('body'), /CSRF/);
  const forged = await page.request.post(base + '/posts', { form: { title: 'Forged post', body: 'no token' } });
  assert.equal(forged.status(), 403, 'a scripted post with the session cookie but no token');
  await page.goto(base + '/posts');
  assert.equal(await page.getByText('Forged post').count(), 0, 'nothing was created');

  step('a missing post is the 404 page');
  response = await page.goto(base + '/posts/999999');
  assert.equal(response.status(), 404);
  await expectText(page.locator('h1'), 'Not found');

  step('log out: the links come back, and a wrong password is refused');
  await submit(page, 'button:has-text("Log out")');
  await page.locator('header a', { hasText: 'Log in' }).waitFor({ timeout: STEP_MS });
  await page.click('header >> text=Log in');
  await page.fill('#user_email', 'ada@example.org');
  await page.fill('#user_password', 'not the password');
  response = await submit(page, 'button:has-text("Log in")');
  assert.equal(response.status(), 422);
  await expectText(page.locator('.errors'), 'Wrong email address or password');
  await page.fill('#user_password', 'correct horse battery');
  response = await submit(page, 'button:has-text("Log in")');
  assert.equal(response.status(), 200);
  await expectText(page.locator('header .who'), 'Ada Lovelace');
}

// ----------------------------------------------------------------- main

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-browser-'));
  const blog = new Server(path.resolve(args.blog), ['--workers', '0', '--threads', '2'],
                          { BLOG_DB: path.join(tmp, 'blog.sqlite') });
  const passed = await runBrowserTest({
    name: 'blog', server: blog, executablePath: args.chromium, overallMs: OVERALL_MS,
    run: async (browser, base) => {
      const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
      const page = await context.newPage();
      page.setDefaultTimeout(STEP_MS);
      page.setDefaultNavigationTimeout(STEP_MS);
      await run(page, base, path.resolve(args.out));
    },
  });
  fs.rmSync(tmp, { recursive: true, force: true });
  if (passed) console.log(`browser test: passed; screenshot in ${path.join(path.resolve(args.out), 'blog.png')}`);
  process.exit(passed ? 0 : 1);
}

main();
