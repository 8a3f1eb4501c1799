// The blog benchmark's peer on Express 4: the blog index (TreeFrog's test) and Klone's
// "hello NAME" page.
//   NODE_ENV=production node server.js PORT DB [WORKERS]
// GET /posts?page=N lists the newest 10 posts (title linking to /posts/ID, date) in the
// markup of kiln's examples/blog index, read from SQLite on every request: the total
// and the page's rows in one read transaction, as kiln's db::page() does, whole rows
// like an ORM, the same ORDER BY. better-sqlite3 (synchronous, its own bundled SQLite),
// statements prepared once. The page is built by hand with an escaping function giving
// kiln's entities (no template engine: the cheapest way Node has). GET /hello?name=X
// answers the page of kiln's examples/hello, <h1>hello X</h1> with X escaped.
// WORKERS processes (default: one per core) share the port through node's cluster: no
// state lives in the process, so nothing needs a shared store.
'use strict';
const cluster = require('cluster');
const fs = require('fs');
const os = require('os');

const [port, dbPath, workersArg] = process.argv.slice(2);
if (!port || !dbPath) {
  console.error('usage: node server.js PORT DB [WORKERS]');
  process.exit(2);
}
const workers = Number(workersArg || os.availableParallelism());

if (workers > 1 && cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    console.error(`worker ${worker.process.pid} exited (${signal || code})`);
    process.exit(1);  // a benchmark peer that lost a worker is not measured further
  });
} else {
  serve();
}

function serve() {
  const express = require('express');
  const Database = require('better-sqlite3');

  if (!fs.existsSync(dbPath)) {
    console.error(`no database file ${dbPath}`);
    process.exit(1);
  }
  const db = new Database(dbPath, { fileMustExist: true, timeout: 5000 });
  const countPosts = db.prepare('SELECT COUNT(*) AS n FROM posts').pluck();
  const pagePosts = db.prepare('SELECT id, title, body, created_at, updated_at FROM posts ' +
                               'ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?');
  const PER_PAGE = 10;
  // The total and one page (1-based; past the end: no rows), read in one transaction.
  const newest = db.transaction((page) => {
    const total = countPosts.get();
    const posts = (page - 1) * PER_PAGE < total ? pagePosts.all(PER_PAGE, (page - 1) * PER_PAGE) : [];
    return { total, posts };
  });

  // The page around the list: the markup of kiln's examples/blog (layouts/app.html and
  // posts/index.html) with no flash notice.
  const PAGE_HEAD = '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    '<title>Posts \u00b7 kiln blog</title>\n<link rel="stylesheet" href="/app.css">\n</head>\n<body>\n' +
    '<header class="site">\n  <a class="brand" href="/posts">kiln blog</a>\n' +
    '  <a class="button" href="/posts/new">New post</a>\n</header>\n<main>\n<h1>Posts</h1>\n';
  const PAGE_FOOT = '</main>\n</body>\n</html>\n';
  // Klone's test page, the markup of kiln's examples/hello (views/hello.html).
  const HELLO_HEAD = '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>hello</title></head>\n' +
    '<body>\n<h1>hello ';
  const HELLO_FOOT = '</h1>\n</body></html>\n';
  const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);
  const two = (n) => (n < 10 ? '0' : '') + n;
  const dateText = (d) => `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ` +
                          `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`;
  const rfc3339 = (d) => d.toISOString().slice(0, 19) + 'Z';

  const app = express();
  app.disable('x-powered-by');

  app.get('/posts', (req, res) => {
    let page = Number.parseInt(typeof req.query.page === 'string' ? req.query.page : '', 10);
    if (!(page >= 1 && page <= 2 ** 40)) page = 1;
    const { total, posts } = newest(page);
    const pages = Math.ceil(total / PER_PAGE);
    let s = PAGE_HEAD;
    if (posts.length === 0) {
      s += '<p class="empty">No posts yet. <a href="/posts/new">Write the first one</a>.</p>\n';
    } else {
      s += '<ul class="posts">\n';
      for (const p of posts) {
        const d = new Date(p.created_at * 1000);
        s += `  <li>\n    <a href="/posts/${p.id}">${escapeHtml(p.title)}</a>\n` +
             `    <time datetime="${rfc3339(d)}">${dateText(d)}</time>\n  </li>\n`;
      }
      s += '</ul>\n';
    }
    if (pages > 1) {
      s += '<nav class="pagination">\n';
      if (page > 1) s += `  <a rel="prev" href="/posts?page=${page - 1}">&larr; Newer</a>\n`;
      s += `  <span>Page ${page} of ${pages}</span>\n`;
      if (page < pages) s += `  <a rel="next" href="/posts?page=${page + 1}">Older &rarr;</a>\n`;
      s += '</nav>\n';
    }
    s += PAGE_FOOT;
    res.type('html').send(s);
  });

  app.get('/hello', (req, res) => {
    const name = typeof req.query.name === 'string' ? req.query.name : 'no name given';
    res.type('html').send(HELLO_HEAD + escapeHtml(name) + HELLO_FOOT);
  });

  app.use((err, req, res, next) => {  // eslint-disable-line no-unused-vars
    console.error(err);
    res.status(500).type('text').send('Internal Server Error');
  });

  app.listen(Number(port), '127.0.0.1');
}
