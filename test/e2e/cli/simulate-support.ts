import { runCycle } from '#core';
import type { Database } from '#db';
import { runCli } from '../../../apps/cli/src/cli.js';

export const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
export const H = 3_600_000;

/** Runs `qm` in-process (its main function with argv) against the real scheduling core, at NOW. */
export async function qmInProcess(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const cwd = options.cwd ?? process.cwd();
  const code = await runCli(args, {
    stdout: { write: (s: string) => ((stdout += s), true) },
    stderr: { write: (s: string) => ((stderr += s), true) },
    repoRoot: cwd,
    cwd,
    env: options.env ?? {},
    scheduler: runCycle,
    now: () => NOW,
  });
  return { code, stdout, stderr };
}

/** The cluster `qm simulate --from-db` replays on: one flavor, two teams of a cohort with 8 each, two 8-GPU nodes. */
export async function seedSimulatedCluster(db: Database): Promise<void> {
  const p = db.prisma;
  await p.flavor.create({ data: { name: 'h100-80gb', kind: 'nvidia_gpu', resourceName: 'nvidia.com/gpu' } });
  await p.cohort.create({ data: { name: 'research' } });
  for (const team of ['vision', 'nlp']) {
    await p.team.create({ data: { name: team, cohort: 'research' } });
    await p.quota.create({ data: { team, flavor: 'h100-80gb', nominal: 8 } });
  }
  for (const name of ['n1', 'n2']) await p.node.create({ data: { name, flavor: 'h100-80gb', accelerators: 8, cpuMillis: 64_000, memoryMiB: 512_000 } });
}

/** A finished job of the history (8 GPUs per replica): submitted, started (null: never), finished, at epoch ms. */
export async function historyJob(
  db: Database,
  job: { name: string; team: string; replicas: number; submitted: number; started: number | null; finished: number | null; state: 'SUCCEEDED' | 'CANCELLED' },
): Promise<void> {
  await db.prisma.job.create({
    data: {
      name: job.name,
      team: job.team,
      kind: 'training',
      replicas: job.replicas,
      minReplicas: job.replicas,
      acceleratorsPerReplica: 8,
      flavors: ['h100-80gb'],
      template: { image: 'x' },
      createdBy: 'test',
      state: job.state,
      flavor: job.started === null ? null : 'h100-80gb',
      submittedAt: new Date(job.submitted),
      queuedAt: new Date(job.submitted),
      startedAt: job.started === null ? null : new Date(job.started),
      finishedAt: job.finished === null ? null : new Date(job.finished),
    },
  });
}
