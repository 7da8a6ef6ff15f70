/** Two statements in flight and up to 256 calls each: what the hot paths use unless they say otherwise. */
const DEFAULT_GROUPING: GroupBatcherOptions = { maxGroup: 256, maxInFlight: 2 };

export interface GroupBatcherOptions {
  /** Most calls in one group (one statement). */
  maxGroup: number;
  /** Most groups running at once (each holds one pooled connection). */
  maxInFlight: number;
  /** Most calls waiting for a group; beyond it `call` rejects with `full(waiting)`. Unbounded if unset. */
  maxQueued?: number;
  full?: (waiting: number) => Error;
}

interface Waiting<In, Out> {
  input: In;
  resolve: (output: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for statements that many concurrent callers make one row at a time. A call goes at once
 * while fewer than `maxInFlight` groups run; otherwise it waits, and the calls that waited go together
 * as one group — one statement, one round trip — when a slot frees. So an idle system adds no latency
 * and a busy one makes fewer, larger statements. `run` answers the group in input order; if it throws,
 * each call of the group is run alone, so one bad row fails only its own call.
 */
export class GroupBatcher<In, Out> {
  private queue: Waiting<In, Out>[] = [];
  private inFlight = 0;

  constructor(
    private readonly run: (group: readonly In[]) => Promise<readonly Out[]>,
    private readonly options: GroupBatcherOptions = DEFAULT_GROUPING,
  ) {}

  call(input: In): Promise<Out> {
    const { maxQueued, full } = this.options;
    if (maxQueued !== undefined && this.queue.length >= maxQueued) {
      return Promise.reject(full ? full(this.queue.length) : new Error(`${this.queue.length} calls are already waiting`));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const group = this.queue.splice(0, this.options.maxGroup);
      this.inFlight++;
      void this.settle(group).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async settle(group: Waiting<In, Out>[]): Promise<void> {
    let outputs: readonly Out[];
    try {
      outputs = await this.run(group.map((w) => w.input));
      if (outputs.length !== group.length) throw new Error(`a group of ${group.length} calls got ${outputs.length} answers`);
    } catch (error) {
      if (group.length === 1) group[0]!.reject(error);
      else await Promise.all(group.map((w) => this.settle([w])));
      return;
    }
    group.forEach((w, i) => w.resolve(outputs[i]!));
  }
}
