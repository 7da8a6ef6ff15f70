import type { Command } from 'commander';
import { type Connection, type GlobalFlags, resolveConnection } from './client/connection.js';
import type { QmIo } from './io.js';

/** What every API command gets: the I/O, the clock, and a lazily made connection. */
export class CommandContext {
  private connection: Connection | undefined;
  private interrupt: AbortSignal | undefined;
  /** The arguments `qm` was run with (after the program name). */
  argv: readonly string[] = [];
  /** The exit code a command asked for (0 unless it called exit). */
  exitCode = 0;

  constructor(
    readonly io: QmIo,
    private readonly program: Command,
  ) {}

  get flags(): GlobalFlags {
    return this.program.opts<GlobalFlags>();
  }

  connect(): Connection {
    return (this.connection ??= resolveConnection(this.flags, this.io.env, (line) => this.warn(line)));
  }

  now(): number {
    return this.io.now();
  }

  /** Time zone for display: the process's (TZ). */
  get timeZone(): string | undefined {
    const tz = this.io.env.TZ;
    if (tz === undefined || tz === '') return undefined;
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      return tz;
    } catch {
      return undefined; // not an IANA name (e.g. a POSIX TZ string): Intl falls back to the system zone
    }
  }

  out(text: string): void {
    this.io.stdout.write(text);
  }

  warn(line: string): void {
    this.io.stderr.write(`${line}\n`);
  }

  /** Ends with this exit code once the action returns (1: some of the work failed; each failure already printed). */
  exit(code: number): void {
    this.exitCode = code;
  }

  /** Aborted by Ctrl-C or SIGTERM (listened for from the first call on: only watches stop gracefully). */
  interrupted(): AbortSignal {
    return (this.interrupt ??= this.io.interrupts?.() ?? new AbortController().signal);
  }

  get isTTY(): boolean {
    return this.io.stdout.isTTY === true;
  }
}
