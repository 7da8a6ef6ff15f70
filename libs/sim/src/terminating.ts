import type { ClusterNode, ReplicaPlacement } from '#core';

/**
 * Accelerators that preempted or moved jobs still hold while they run through their grace period. Nobody
 * may use them before it ends (the preemptor that took a victim's accelerators starts only then, too), so
 * each cycle's snapshot shows them on their nodes as `external` use, as Kubernetes shows a terminating pod.
 */
export class Terminating {
  private held: { untilMs: number; node: string; accelerators: number }[] = [];

  /** `accelerators` of `node` stay held until virtual ms `untilMs`. */
  add(untilMs: number, node: string, accelerators: number): void {
    if (accelerators > 0) this.held.push({ untilMs, node, accelerators });
  }

  /** Accelerators of `node` held after virtual ms `now`. */
  on(node: string, now: number): number {
    let sum = 0;
    for (const h of this.held) if (h.node === node && h.untilMs > now) sum += h.accelerators;
    return sum;
  }

  /** `nodes` with what is held after `now` added to their external use (`nodes` itself when nothing is). */
  nodes(nodes: ClusterNode[], now: number): ClusterNode[] {
    if (this.held.length > 0) this.held = this.held.filter((h) => h.untilMs > now);
    if (this.held.length === 0) return nodes;
    const byNode = new Map<string, number>();
    for (const h of this.held) byNode.set(h.node, (byNode.get(h.node) ?? 0) + h.accelerators);
    return nodes.map((n) => {
      const a = byNode.get(n.name);
      if (a === undefined) return n;
      const e = n.external;
      return { ...n, external: { accelerators: (e?.accelerators ?? 0) + a, cpuMillis: e?.cpuMillis ?? 0, memoryMiB: e?.memoryMiB ?? 0 } };
    });
  }
}

/**
 * One cycle's accounting of what is physically free on the nodes that preempted and moved jobs leave: a job
 * leaving through a grace period holds its accelerators until the period ends, so an admission placed on
 * them (the core counts a victim's capacity as released at once) starts only then.
 */
export class GraceRoom {
  /** Free accelerators per node touched, counted before any job left it, then as admissions take them. */
  private readonly free = new Map<string, number>();
  /** What leaving jobs hold per node, and until when (virtual ms). */
  private readonly holds = new Map<string, { untilMs: number; accelerators: number }[]>();

  constructor(
    private readonly now: number,
    /** Free accelerators of a node now (before the jobs leaving in this cycle left it). */
    private readonly freeOf: (node: string) => number,
  ) {}

  /** Call before a job on `placement` leaves (its accelerators still counted as held). */
  note(placement: readonly ReplicaPlacement[]): void {
    for (const p of placement) if (!this.free.has(p.node)) this.free.set(p.node, this.freeOf(p.node));
  }

  /** The job on `placement` left; it holds its accelerators until `untilMs` (now: released at once). */
  leave(placement: readonly ReplicaPlacement[], untilMs: number): void {
    for (const p of placement) {
      if (untilMs <= this.now) this.free.set(p.node, (this.free.get(p.node) ?? 0) + p.accelerators);
      else {
        const list = this.holds.get(p.node) ?? [];
        list.push({ untilMs, accelerators: p.accelerators });
        list.sort((a, b) => a.untilMs - b.untilMs);
        this.holds.set(p.node, list);
      }
    }
  }

  /** An admission takes `placement`: ms from now until all of its accelerators are physically free. */
  take(placement: readonly ReplicaPlacement[]): number {
    let waitUntil = this.now;
    for (const p of placement) {
      const free = this.free.get(p.node);
      if (free === undefined) continue;
      let need = p.accelerators - Math.max(0, free);
      this.free.set(p.node, Math.max(0, free - p.accelerators));
      for (const h of this.holds.get(p.node) ?? []) {
        if (need <= 0) break;
        const x = Math.min(need, h.accelerators);
        h.accelerators -= x;
        need -= x;
        waitUntil = Math.max(waitUntil, h.untilMs);
      }
    }
    return waitUntil - this.now;
  }

  /** What leaving jobs still hold that no admission took, to keep held until their grace periods end. */
  leftovers(): { node: string; untilMs: number; accelerators: number }[] {
    const out: { node: string; untilMs: number; accelerators: number }[] = [];
    for (const [node, list] of this.holds) for (const h of list) if (h.accelerators > 0) out.push({ node, untilMs: h.untilMs, accelerators: h.accelerators });
    return out;
  }
}
