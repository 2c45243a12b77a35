// A slow apiserver, for the soak's chaos: a TCP proxy on 127.0.0.1 in front of kube-apiserver that the
// controllers' kubeconfigs point at. It forwards bytes untouched (TLS end to end: the apiserver's certificate
// names 127.0.0.1, which is still the address dialled), each chunk held for the current delay, in order, both
// ways. A delay of 0 forwards at once. Requests delayed in flight past leaseDuration − renewDeadline (5 s) could
// land after a takeover, which no fence can stop (test/sim/README.md, "What is left out"): the soak's delays stay
// under it.
import { createServer, connect, type Server, type Socket } from 'node:net';

export class DelayingProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  /** Milliseconds each chunk waits, set by the chaos; read when a chunk arrives. */
  delayMs = 0;
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  async start(): Promise<number> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    return this.port;
  }

  /** Closes the listener and every connection through it. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = connect(this.targetPort, this.targetHost);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    this.pipe(client, upstream);
    this.pipe(upstream, client);
  }

  /** Forwards `from` to `to`, each chunk after the delay in force when it arrived, never out of order. */
  private pipe(from: Socket, to: Socket): void {
    const queue: { due: number; chunk: Buffer | null }[] = [];
    let timer: NodeJS.Timeout | null = null;
    const drain = (): void => {
      timer = null;
      while (queue.length > 0 && (queue[0] as { due: number }).due <= Date.now()) {
        const { chunk } = queue.shift() as { chunk: Buffer | null };
        if (chunk === null) to.end();
        else if (!to.destroyed) to.write(chunk);
      }
      if (queue.length > 0) timer = setTimeout(drain, (queue[0] as { due: number }).due - Date.now());
    };
    const push = (chunk: Buffer | null): void => {
      const last = queue.length > 0 ? (queue[queue.length - 1] as { due: number }).due : 0;
      queue.push({ due: Math.max(Date.now() + this.delayMs, last), chunk });
      if (timer === null) drain();
    };
    from.on('data', (chunk: Buffer) => push(chunk));
    from.on('end', () => push(null));
  }
}
