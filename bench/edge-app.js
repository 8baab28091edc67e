// bench/edge-app.js: the app behind bench/edge.  A plain Node http server
// on port 3000 that answers "hello\n" to every request (keep-alive, a
// Content-Length, no chunking), so the figures measure the proxies, not
// the app.  bench/edge puts it into a sandbox through the files API with
// a sandbox.yaml that runs `node edge-app.js`.
'use strict';
const http = require('http');

const port = Number(process.env.PORT || 3000);
const body = Buffer.from('hello\n');
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': body.length });
  res.end(body);
});
// Keep idle keep-alive connections (the proxies' upstream pools) open.
server.keepAliveTimeout = 120000;
server.headersTimeout = 125000;
server.listen(port, '0.0.0.0', () => console.log(`edge-app listening on ${port}`));
