// A Git server for the Flux GitOps test (test/e2e/cluster/flux.sh): Git's own smart-HTTP CGI program,
// `git http-backend`, behind a Node HTTP server on loopback. Serves every bare repository under the project
// root, clone and push, without authentication: it listens on 127.0.0.1 only and lives as long as the test.
//   node --import tsx test/e2e/cluster/git-server.ts <project root> <port>
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const [root, portArg] = process.argv.slice(2);
const port = Number(portArg);
if (!root || !Number.isInteger(port) || port <= 0) {
  throw new Error('usage: git-server.ts <project root> <port>');
}

/** Runs one request through the CGI program, per RFC 3875 as far as http-backend reads it. */
function serve(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const header = (name: string): string => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(', ') : (v ?? '');
  };
  const cgi = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: root,
      // Every repository under the root is served, not only those with a git-daemon-export-ok file.
      GIT_HTTP_EXPORT_ALL: '1',
      // Push (receive-pack) is off for anonymous clients unless the server configuration turns it on.
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: 'true',
      // Protocol v2 is negotiated through this header (source-controller's go-git and git both ask for it).
      GIT_PROTOCOL: header('git-protocol'),
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: header('content-type'),
      // A push's pack can come gzip-encoded; http-backend inflates it itself.
      HTTP_CONTENT_ENCODING: header('content-encoding'),
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
      SERVER_PROTOCOL: 'HTTP/1.1',
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  req.pipe(cgi.stdin);
  cgi.on('error', (err) => {
    if (res.headersSent) res.destroy(err);
    else res.writeHead(500).end(`git http-backend: ${err.message}\n`);
  });

  // The CGI answer: header lines (a Status line among them), a blank line, the body, streamed as it comes.
  let head = Buffer.alloc(0);
  let streaming = false;
  cgi.stdout.on('data', (chunk: Buffer) => {
    if (streaming) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const crlf = head.indexOf('\r\n\r\n');
    const lf = head.indexOf('\n\n');
    const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf : lf;
    if (end < 0) return;
    const sep = end === crlf ? 4 : 2;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const i = line.indexOf(':');
      if (i < 0) continue;
      const name = line.slice(0, i).trim();
      const value = line.slice(i + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    streaming = true;
    res.write(head.subarray(end + sep));
  });
  cgi.on('close', (code) => {
    if (streaming) res.end();
    else if (!res.headersSent)
      res.writeHead(502).end(`git http-backend exited with ${String(code)} before answering\n`);
  });
}

createServer(serve).listen(port, '127.0.0.1', () => {
  console.error(`git-server: serving ${root} on http://127.0.0.1:${String(port)}/`);
});
