/**
 * The simulator's future-event list: a binary min-heap.
 *
 * Events at the same virtual instant are processed in this order (documented contract):
 *   1. completions before arrivals before scheduling cycles (see `EVENT_RANK`), so that a cycle sees
 *      every job that finished and every job that arrived at its instant;
 *   2. then by job id (lexicographic; ids are zero-padded input order), so ties never depend on
 *      insertion order or on the heap's internals;
 *   3. then by insertion sequence (only cycles share an empty id).
 */
export type EventKind = 'completion' | 'arrival' | 'cycle';

export const EVENT_RANK: Record<EventKind, number> = { completion: 0, arrival: 1, cycle: 2 };

export interface SimEvent {
  /** Virtual time, integer milliseconds. */
  at: number;
  kind: EventKind;
  /** Job the event is about ('' for cycles). */
  jobId: string;
  /** For completions: the run it ends (a completion of an earlier, preempted run is stale). */
  run: number;
}

interface Entry extends SimEvent {
  seq: number;
}

function before(a: Entry, b: Entry): boolean {
  if (a.at !== b.at) return a.at < b.at;
  const ra = EVENT_RANK[a.kind];
  const rb = EVENT_RANK[b.kind];
  if (ra !== rb) return ra < rb;
  if (a.jobId !== b.jobId) return a.jobId < b.jobId;
  return a.seq < b.seq;
}

/**
 * Events pushed in order (each not before the last one so pushed and still queued: the trace's
 * arrivals, pushed up front) go to a sorted run read from its front; the others to a binary heap. `pop`
 * takes the earlier of the two heads. The order is the same as one heap's (it is total: `seq` breaks
 * every tie), but the heap stays small — the events of running jobs and cycles — instead of holding
 * every arrival of the trace.
 */
export class EventQueue {
  private readonly heap: Entry[] = [];
  private run: Entry[] = [];
  private runStart = 0;
  private seq = 0;

  get size(): number {
    return this.heap.length + this.run.length - this.runStart;
  }

  push(event: SimEvent): void {
    const entry: Entry = { at: event.at, kind: event.kind, jobId: event.jobId, run: event.run, seq: this.seq++ };
    const run = this.run;
    if (this.runStart === run.length) {
      if (this.runStart > 0) {
        this.run = [entry];
        this.runStart = 0;
        return;
      }
      run.push(entry);
      return;
    }
    if (!before(entry, run[run.length - 1]!)) {
      run.push(entry);
      return;
    }
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent]!;
      if (!before(entry, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = entry;
  }

  peek(): SimEvent | undefined {
    const top = this.heap[0];
    const next = this.run[this.runStart];
    if (top === undefined) return next;
    return next !== undefined && before(next, top) ? next : top;
  }

  pop(): SimEvent | undefined {
    const heap = this.heap;
    const top = heap[0];
    const next = this.run[this.runStart];
    if (next !== undefined && (top === undefined || before(next, top))) {
      this.runStart++;
      return next;
    }
    if (top === undefined) return undefined;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      const n = heap.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const child = r < n && before(heap[r]!, heap[l]!) ? r : l;
        if (!before(heap[child]!, last)) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}
