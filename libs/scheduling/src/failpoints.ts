/**
 * Named crash points for fault-injection tests: `QM_TEST_FAILPOINTS=after-commit:0.3` makes the
 * scheduler kill itself (SIGKILL) right after a cycle committed and before its side effects were
 * enqueued, on 30 % of cycles. Off unless set; the entry point parses the variable.
 */
export const FAILPOINTS = ['after-commit'] as const;
export type Failpoint = (typeof FAILPOINTS)[number];
export type FailpointHook = (point: Failpoint) => void;

export function parseFailpoints(raw: string | undefined, die: () => void, random: () => number = Math.random): FailpointHook | undefined {
  if (!raw?.trim()) return undefined;
  const odds = new Map<Failpoint, number>();
  for (const part of raw.split(',')) {
    const [name, p] = part.trim().split(':');
    if (!(FAILPOINTS as readonly string[]).includes(name ?? '')) throw new Error(`QM_TEST_FAILPOINTS: unknown failpoint "${name}" (known: ${FAILPOINTS.join(', ')})`);
    const probability = p === undefined ? 1 : Number(p);
    if (!(probability >= 0 && probability <= 1)) throw new Error(`QM_TEST_FAILPOINTS: probability of ${name} must be within 0..1, got ${p}`);
    odds.set(name as Failpoint, probability);
  }
  return (point) => {
    const probability = odds.get(point);
    if (probability !== undefined && random() < probability) die();
  };
}
