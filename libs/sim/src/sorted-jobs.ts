/**
 * Jobs kept sorted by id (binary search; splice moves pointers only). The core sorts its inputs by id
 * every cycle; handing it sorted arrays makes those sorts linear.
 */
export class SortedById<T extends { id: string }> {
  private readonly items: T[] = [];
  private readonly byId = new Map<string, T>();

  get size(): number {
    return this.items.length;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): T | undefined {
    return this.byId.get(id);
  }

  /** Inserts or replaces the job with this id. */
  set(item: T): void {
    const i = this.indexOf(item.id);
    if (this.byId.has(item.id)) this.items[i] = item;
    else this.items.splice(i, 0, item);
    this.byId.set(item.id, item);
  }

  delete(id: string): boolean {
    if (!this.byId.delete(id)) return false;
    this.items.splice(this.indexOf(id), 1);
    return true;
  }

  /** A copy, in id order. */
  toArray(): T[] {
    return this.items.slice();
  }

  values(): readonly T[] {
    return this.items;
  }

  /** First index whose id is ≥ `id`. */
  private indexOf(id: string): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.items[mid]!.id < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
