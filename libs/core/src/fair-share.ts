/**
 * Weighted dominant-resource fair share (DRF) across teams:
 *
 *   share(t) = max over flavors f of used_t,f / fleetCapacity_f, divided by fairShareWeight_t
 *
 * where fleetCapacity_f is the allocatable accelerators of every node of flavor f. A team of weight 2
 * is entitled to twice the share of a team of weight 1. Lower share goes first among equal priorities.
 * (A share is a ratio used only for ordering; quantities themselves stay integers.)
 */
export class FairShare {
  private readonly used = new Map<string, Map<string, number>>();

  constructor(
    private readonly capacity: ReadonlyMap<string, number>,
    private readonly weights: ReadonlyMap<string, number>,
  ) {}

  add(team: string, flavor: string, x: number): void {
    let m = this.used.get(team);
    if (m === undefined) {
      m = new Map();
      this.used.set(team, m);
    }
    m.set(flavor, Math.max(0, (m.get(flavor) ?? 0) + x));
  }

  remove(team: string, flavor: string, x: number): void {
    this.add(team, flavor, -x);
  }

  share(team: string): number {
    const m = this.used.get(team);
    if (m === undefined) return 0;
    let dominant = 0;
    for (const [flavor, u] of m) {
      const cap = this.capacity.get(flavor) ?? 0;
      if (cap > 0) dominant = Math.max(dominant, u / cap);
    }
    const w = this.weights.get(team) ?? 1;
    return dominant / (w > 0 ? w : 1);
  }
}
