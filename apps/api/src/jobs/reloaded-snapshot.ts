/**
 * A whole-table read kept in memory for `ttlMs()` (0: read every time), reloaded as a whole when older: one load
 * in flight at a time, shared by its callers; `invalidate()` drops it at once, and a load that began before an
 * invalidation is not kept (it may have read the old rows). What submissions read of the teams' settings (their
 * priority ceilings, their limits) goes through one of these.
 */
export class ReloadedSnapshot<T> {
  private loaded: { at: number; value: T } | undefined;
  private loading: Promise<T> | undefined;
  /** Bumped by every invalidation: a load that began before it is not kept. */
  private generation = 0;

  constructor(
    private readonly load: () => Promise<T>,
    private readonly ttlMs: () => number,
  ) {}

  /** The kept value while younger than the TTL, else a fresh load. */
  async current(): Promise<T> {
    const ttl = this.ttlMs();
    if (ttl > 0 && this.loaded !== undefined && Date.now() - this.loaded.at < ttl) return this.loaded.value;
    return this.reload();
  }

  /** A fresh load (or the one already in flight), whatever the kept value's age. */
  reload(): Promise<T> {
    if (this.loading !== undefined) return this.loading;
    const generation = this.generation;
    const at = Date.now();
    const load: Promise<T> = this.load().then(
      (value) => {
        if (generation === this.generation) this.loaded = { at, value };
        if (this.loading === load) this.loading = undefined;
        return value;
      },
      (error: unknown) => {
        if (this.loading === load) this.loading = undefined;
        throw error;
      },
    );
    this.loading = load;
    return load;
  }

  invalidate(): void {
    this.generation += 1;
    this.loaded = undefined;
    this.loading = undefined;
  }
}
