// The app behind the preview edge in 30-edge.sh: plain Node 18, no
// packages (none are reachable offline).  Every answer carries
// X-Frame-Options: DENY so the test can see the edge drop it.
//   /          hello
//   /headers   the request's headers as JSON
//   /conn      the port the request came from (the proxy's connection)
//   /then-drop hello, then the next request on this connection is
//              dropped unanswered (an app closing an idle connection just
//              as a request arrives)
//   /echo      the request body streamed back (any length, chunked too)
//   /sse       five server-sent events 200 ms apart
//   /big       20 MiB of 'x', streamed with backpressure
//   /ws        WebSocket echo (handshake and frames by hand)
//   /seen      the method and path of the last 1,000 requests, as JSON
//              (52-hostile-edge.sh: what reached the app)
'use strict';
const http = require('http');
const crypto = require('crypto');

const BIG = 20 * 1024 * 1024;
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function big(res) {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  res.writeHead(200, {'Content-Type': 'application/octet-stream', 'Content-Length': BIG});
  const pump = () => {
    while (sent < BIG) {
      const n = Math.min(chunk.length, BIG - sent);
      sent += n;
      if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
}

function sse(req, res) {
  let i = 0;
  res.writeHead(200, {'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache'});
  const t = setInterval(() => {
    res.write(`data: event ${i}\n\n`);
    if (++i === 5) {
      clearInterval(t);
      res.end();
    }
  }, 200);
  req.on('close', () => clearInterval(t));
}

const seen = [];

const server = http.createServer((req, res) => {
  seen.push(`${req.method} ${req.url}`);
  if (seen.length > 1000) seen.shift();
  if (req.socket.dropNext) {
    req.socket.destroy();
    return;
  }
  res.setHeader('X-Frame-Options', 'DENY');
  switch (new URL(req.url, 'http://app').pathname) {
    case '/then-drop':
      req.socket.dropNext = true;
    // falls through
    case '/':
      res.setHeader('Content-Type', 'text/plain');
      res.end('hello from the app\n');
      break;
    case '/headers':
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(req.headers));
      break;
    case '/conn':
      res.setHeader('Content-Type', 'text/plain');
      res.end(`${req.socket.remotePort}\n`);
      break;
    case '/echo':
      res.setHeader('Content-Type', 'application/octet-stream');
      req.pipe(res);
      break;
    case '/sse':
      sse(req, res);
      break;
    case '/big':
      big(res);
      break;
    case '/seen':
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(seen));
      break;
    default:
      res.statusCode = 404;
      res.end('not here\n');
  }
});

function wsFrame(op, payload) {
  let head;
  if (payload.length < 126) {
    head = Buffer.from([0x80 | op, payload.length]);
  } else if (payload.length < 65536) {
    head = Buffer.alloc(4);
    head[0] = 0x80 | op;
    head[1] = 126;
    head.writeUInt16BE(payload.length, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = 0x80 | op;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(payload.length), 2);
  }
  return Buffer.concat([head, payload]);
}

// Takes complete frames off the front of buf; returns what is left.
function wsFrames(sock, buf) {
  for (;;) {
    if (buf.length < 2) return buf;
    const op = buf[0] & 0x0f, masked = buf[1] & 0x80;
    let len = buf[1] & 0x7f, off = 2;
    if (len === 126) {
      if (buf.length < 4) return buf;
      len = buf.readUInt16BE(2);
      off = 4;
    } else if (len === 127) {
      if (buf.length < 10) return buf;
      len = Number(buf.readBigUInt64BE(2));
      off = 10;
    }
    const mask = masked ? buf.subarray(off, off + 4) : null;
    if (masked) off += 4;
    if (buf.length < off + len) return buf;
    const payload = Buffer.from(buf.subarray(off, off + len));
    if (mask) for (let i = 0; i < len; i++) payload[i] ^= mask[i % 4];
    buf = buf.subarray(off + len);
    if (op === 0x8) {
      sock.end(wsFrame(0x8, payload));
      return Buffer.alloc(0);
    }
    if (op === 0x9) sock.write(wsFrame(0xa, payload));
    else if (op === 0x1 || op === 0x2) sock.write(wsFrame(op, payload));
  }
}

server.on('upgrade', (req, sock, head) => {
  const key = req.headers['sec-websocket-key'];
  if (req.url !== '/ws' || !key) {
    sock.destroy();
    return;
  }
  const accept = crypto.createHash('sha1').update(key + WS_GUID).digest('base64');
  sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n' +
             'Connection: Upgrade\r\nX-Frame-Options: DENY\r\n' +
             `Sec-WebSocket-Accept: ${accept}\r\n\r\n`);
  let buf = Buffer.from(head);
  buf = wsFrames(sock, buf);
  sock.on('data', (d) => { buf = wsFrames(sock, Buffer.concat([buf, d])); });
  sock.on('error', () => {});
});

server.listen(Number(process.env.PORT || 3000), '0.0.0.0');
