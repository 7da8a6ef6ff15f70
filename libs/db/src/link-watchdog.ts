import pg from 'pg';

/**
 * Notices a Postgres that stopped answering without closing its connections (a network partition, a
 * black-holed link, a frozen server): every `everyMs` it runs `SELECT 1` on its own connection, and when
 * no answer comes within `timeoutMs` it calls `onSilent` once (the Database then drops every pooled
 * connection, so queries waiting on them fail at once and the API answers 503 instead of hanging). A
 * refused or reset connection is not silence: the pool's connections fail by themselves then.
 */
export class LinkWatchdog {
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private silent = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly everyMs: number,
    private readonly timeoutMs: number,
    private readonly onSilent: () => void,
  ) {}

  start(): void {
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.drop();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.probe().then(() => this.schedule()), this.everyMs);
    this.timer.unref();
  }

  private async probe(): Promise<void> {
    const outcome = await this.answer();
    if (this.stopped) return;
    if (outcome === 'answered') {
      this.silent = false;
      return;
    }
    this.drop();
    if (outcome === 'silent' && !this.silent) {
      this.silent = true;
      this.onSilent();
    }
  }

  /** 'answered', 'silent' (nothing within the timeout) or 'failed' (refused, reset, an error). */
  private answer(): Promise<'answered' | 'silent' | 'failed'> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        // The event loop may have been busy past the deadline with the answer already read: look once
        // more after pending I/O (setImmediate runs after the poll phase) before calling it silence.
        setImmediate(() => resolve('silent'));
      }, this.timeoutMs);
      const done = (outcome: 'answered' | 'failed'): void => {
        clearTimeout(timer);
        resolve(outcome);
      };
      const run = async (): Promise<void> => {
        if (!this.client) {
          const client = new pg.Client(this.config);
          client.on('error', () => undefined);
          this.client = client;
          await client.connect();
        }
        await this.client.query('SELECT 1');
      };
      run().then(
        () => done('answered'),
        () => done('failed'),
      );
    });
  }

  private drop(): void {
    const client = this.client;
    this.client = null;
    if (client) void client.end().catch(() => undefined);
    destroySocket(client);
  }
}

/** Closes a pg client's socket now (no goodbye over a dead link): its pending queries fail at once. */
export function destroySocket(client: pg.Client | pg.PoolClient | null): void {
  const stream = (client as { connection?: { stream?: { destroy(): void } } } | null)?.connection?.stream;
  stream?.destroy();
}
