import net from 'node:net';

/**
 * A fault-injecting TCP proxy for chaos tests: listens on a free local port and forwards to one
 * upstream (the real Postgres or Redis), and on request
 * - `reset()`: every open connection is reset (RST) and new ones are reset as they arrive, until `heal()`;
 * - `blackhole()`: nothing flows any more in either direction and new connections hang (a partition:
 *   no RST, no FIN), until `heal()` lets the held bytes through;
 * - `latency(ms)`: every chunk is delayed by `ms` in each direction (order kept).
 * The service under test is pointed at `url`; the real servers are never stopped.
 */
export class FaultProxy {
  private mode: 'pass' | 'reset' | 'blackhole' = 'pass';
  private delayMs = 0;
  private readonly links = new Set<Link>();
  /** Connections accepted so far (to see that a client reconnected). */
  accepted = 0;

  private constructor(
    private readonly server: net.Server,
    private readonly upstream: { host: string; port: number },
    readonly port: number,
  ) {}

  static async start(upstream: { host: string; port: number }): Promise<FaultProxy> {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('fault proxy: no address');
    const proxy = new FaultProxy(server, upstream, address.port);
    server.on('connection', (socket) => proxy.accept(socket));
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  reset(): void {
    this.mode = 'reset';
    for (const link of [...this.links]) link.reset();
  }

  blackhole(): void {
    this.mode = 'blackhole';
    for (const link of this.links) link.hold();
  }

  latency(ms: number): void {
    this.delayMs = ms;
  }

  heal(): void {
    this.mode = 'pass';
    this.delayMs = 0;
    for (const link of this.links) link.release();
  }

  /** Connections currently open through the proxy. */
  get open(): number {
    return this.links.size;
  }

  async close(): Promise<void> {
    for (const link of [...this.links]) link.reset();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    client.on('error', () => undefined);
    if (this.mode === 'reset') {
      resetSocket(client);
      return;
    }
    const link = new Link(client, () => this.delayMs, () => this.links.delete(link));
    this.links.add(link);
    if (this.mode === 'blackhole') link.hold();
    link.connect(this.upstream);
  }
}

/** One client connection and its upstream connection. */
class Link {
  private upstream: net.Socket | null = null;
  private held = false;
  private pendingUpstream: { host: string; port: number } | null = null;
  private done = false;

  constructor(
    private readonly client: net.Socket,
    private readonly delay: () => number,
    private readonly onClose: () => void,
  ) {
    client.on('close', () => this.close());
  }

  connect(target: { host: string; port: number }): void {
    if (this.held) {
      this.pendingUpstream = target; // a partition: the SYN goes nowhere until healed
      return;
    }
    const upstream = net.connect(target.port, target.host);
    this.upstream = upstream;
    upstream.on('error', () => undefined);
    upstream.on('close', () => this.close());
    this.pipe(this.client, upstream);
    this.pipe(upstream, this.client);
  }

  hold(): void {
    this.held = true;
    this.client.pause();
    this.upstream?.pause();
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    if (this.pendingUpstream) {
      const target = this.pendingUpstream;
      this.pendingUpstream = null;
      this.connect(target);
    }
    this.client.resume();
    this.upstream?.resume();
  }

  reset(): void {
    resetSocket(this.client);
    if (this.upstream) resetSocket(this.upstream);
    this.close();
  }

  private pipe(from: net.Socket, to: net.Socket): void {
    // Delayed chunks wait in one queue drained by one timer, strictly in arrival order: a timer per chunk
    // can fire out of order (timers due in the same millisecond but created with different durations sit
    // in different lists), which reorders the byte stream — Postgres then sees garbage ("invalid frontend
    // message type") and drops the connection.
    const queue: { at: number; chunk: Buffer }[] = [];
    let timer: NodeJS.Timeout | undefined;
    let ended = false;
    const drain = (): void => {
      timer = undefined;
      while (queue.length > 0 && queue[0]!.at <= Date.now()) {
        const { chunk } = queue.shift()!;
        if (!to.destroyed) to.write(chunk);
      }
      if (queue.length > 0) timer = setTimeout(drain, Math.max(0, queue[0]!.at - Date.now()));
      else if (ended && !to.destroyed) to.end();
    };
    from.on('data', (chunk: Buffer) => {
      const ms = this.delay();
      if (ms === 0 && queue.length === 0) {
        if (!to.destroyed) to.write(chunk);
        return;
      }
      queue.push({ at: Date.now() + ms, chunk });
      timer ??= setTimeout(drain, Math.max(0, queue[0]!.at - Date.now()));
    });
    from.on('end', () => {
      ended = true;
      if (queue.length === 0) to.end();
    });
    if (this.held) from.pause();
  }

  private close(): void {
    if (this.done) return;
    this.done = true;
    if (!this.client.destroyed) this.client.destroy();
    if (this.upstream && !this.upstream.destroyed) this.upstream.destroy();
    this.onClose();
  }
}

/**
 * Resets a connection (RST). A socket we already ended (FIN sent: its peer ended its side and we passed
 * that on) cannot be reset: libuv refuses uv_tcp_close_reset while a shutdown is under way (EINVAL), Node
 * then marks the handle closing without ever closing it, and the process spins at exit waiting for it —
 * what kept `npm run test:chaos` from exiting after its tests passed. Such a socket is destroyed instead.
 */
export function resetSocket(socket: net.Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}
