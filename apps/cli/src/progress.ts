/** A one-line progress bar with ETA, redrawn in place; only drawn when the stream is a TTY. */
export interface ProgressStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
}

export class ProgressBar {
  private readonly started: number;
  private lastDraw = 0;
  private drawn = false;

  constructor(
    private readonly stream: ProgressStream,
    private readonly label: string,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.started = clock();
  }

  get enabled(): boolean {
    return this.stream.isTTY === true;
  }

  update(done: number, total: number): void {
    if (!this.enabled) return;
    const now = this.clock();
    if (now - this.lastDraw < 100 && done < total) return;
    this.lastDraw = now;
    this.stream.write(`\r${formatProgress(this.label, done, total, (now - this.started) / 1000)}\u001b[K`);
    this.drawn = true;
  }

  finish(): void {
    if (this.drawn) this.stream.write('\r\u001b[K');
  }
}

export function formatProgress(label: string, done: number, total: number, elapsedSeconds: number, width = 30): string {
  const frac = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(frac * width);
  const eta = frac > 0 && frac < 1 ? `ETA ${formatDuration((elapsedSeconds * (1 - frac)) / frac)}` : frac >= 1 ? 'done' : 'ETA ?';
  return `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(frac * 100).toFixed(0).padStart(3)}% ${done}/${total} jobs ${eta}`;
}

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(0)}s`;
  const m = Math.floor(seconds / 60);
  return m < 60 ? `${m}m${String(Math.round(seconds % 60)).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
