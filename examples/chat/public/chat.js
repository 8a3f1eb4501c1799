// The chat page: WebSocket at /ws, or server-sent events at /events plus POST /send
// where WebSocket is missing (or ?transport=sse). Messages are shown as text, never
// as HTML.
'use strict';

const params = new URLSearchParams(location.search);
const log = document.getElementById('log');
const status = document.getElementById('status');
const nameInput = document.getElementById('name');
const textInput = document.getElementById('text');
nameInput.value = params.get('name') || '';

function show(msg) {
  if (msg.welcome) {
    status.textContent = `connected by ${msg.transport} to worker ${msg.worker}`;
    document.body.dataset.worker = msg.worker;
    document.body.dataset.transport = msg.transport;
    return;
  }
  const li = document.createElement('li');
  const who = document.createElement('span');
  who.className = 'name';
  who.textContent = msg.name;
  const worker = document.createElement('span');
  worker.className = 'worker';
  worker.textContent = `via worker ${msg.worker}`;
  li.append(who, document.createTextNode(msg.text), worker);
  log.append(li);
}

let send;
if ('WebSocket' in window && params.get('transport') !== 'sse') {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws?name=` +
              encodeURIComponent(nameInput.value);
  let ws;
  const open = () => {
    ws = new WebSocket(url);
    ws.onmessage = (e) => show(JSON.parse(e.data));
    ws.onclose = () => { status.textContent = 'disconnected, retrying…'; setTimeout(open, 2000); };
  };
  open();
  send = (text) => ws.send(text);
} else {
  const events = new EventSource('/events');
  events.onmessage = (e) => show(JSON.parse(e.data));
  events.onerror = () => { status.textContent = 'reconnecting…'; };
  send = (text) => fetch('/send', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: nameInput.value, text }),
  });
}

document.getElementById('say').addEventListener('submit', (e) => {
  e.preventDefault();
  if (!textInput.value) return;
  send(textInput.value);
  textInput.value = '';
});
