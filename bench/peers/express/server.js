// The session study's generic web application on Express 4.
//   NODE_ENV=production node server.js PORT PUBLIC_DIR LOREM_FILE
// GET / prints the page with the visitor's session id (express-session: the session is
// created on the first visit and found again by its signed connect.sid cookie). The
// store is memorystore, express-session's in-memory store for production use on one
// process (it prunes expired sessions; the default MemoryStore warns that it leaks).
// One Node process: a shared store for a cluster would mean Redis, see README.
// Static files: express.static, ahead of the session middleware. POST /upload reads
// the whole body and answers "Data accepted".
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const express = require('express');
const session = require('express-session');
const MemoryStore = require('memorystore')(session);

const [port, publicDir, loremFile] = process.argv.slice(2);
if (!port || !publicDir || !loremFile) {
  console.error('usage: node server.js PORT PUBLIC_DIR LOREM_FILE');
  process.exit(2);
}
const loremIpsum = fs.readFileSync(loremFile, 'utf8');
const head = '<!DOCTYPE html>' +
  '<html>' +
  '<head>' +
  '<meta charset="UTF-8">' +
  '<link rel="stylesheet" type="text/css" href="/bootstrap.css">' +
  '<title>Generic Web Application</title>' +
  '</head>' +
  '<body>' +
  '<h1>Generic Web Application</h1>' +
  '<img src="/servers.jpg" width="700">' +
  '<h2>Lorem Ipsum</h2>' + loremIpsum;

const app = express();
app.use(express.static(publicDir));
app.use(session({
  secret: process.env.SESSION_SECRET || crypto.randomBytes(32).toString('hex'),
  store: new MemoryStore({ checkPeriod: 10 * 60 * 1000 }),
  cookie: { maxAge: 30 * 60 * 1000, httpOnly: true, sameSite: 'lax' },
  resave: false,
  saveUninitialized: true,
}));

app.get('/', (req, res) => {
  res.set('Cache-Control', 'no-store');
  res.type('html');
  res.send(head + '<p>' + req.session.id + '</p></body></html>');
});

app.post('/upload', express.raw({ type: () => true, limit: '1mb' }), (req, res) => {
  res.type('text').send('Data accepted');
});

app.listen(Number(port), '127.0.0.1').on('error', (err) => {
  console.error(err.message);
  process.exit(1);
});
