// The composition root of `npm start`: the API app and the scheduler app (scheduler + side-effect worker) in
// one process, with one Postgres pool and one logger. The only place where one app's modules meet another's
// (tools/eslint/boundaries.js). The scheduler still elects itself through the lease, so several such
// processes are safe.
//
// Order of the start: Postgres is prepared, the scheduler and the worker start (the first cycle begins),
// and only once that cycle has ended (or this process is a standby; at most QM_API_WAITS_FOR_FIRST_CYCLE_MS)
// is the API loaded and built — NestJS, Fastify, Swagger and class-validator are seconds of module loading
// under load, which would otherwise delay the first cycle or, overlapping it, compete with its commit.
import { Config, createLogger } from '#common';
import { schedulerSettingsFromEnv } from '#scheduling';
import { apiDatabase, prepareDatabase } from '../../api/src/startup.js';
import { runMain, startRole } from '../../scheduler/src/bootstrap.js';

runMain('quartermaster', async () => {
  const config = Config.fromEnv(process.env);
  const settings = schedulerSettingsFromEnv(process.env);
  const logger = createLogger(config.logLevel, 'quartermaster');
  await prepareDatabase(config);
  const database = apiDatabase(config);
  // What has started, stopped in this order (as before: Kubernetes mode, scheduler and worker, API), then the pool.
  let kube: { stop(): Promise<void> } | null = null;
  let background: { stop(): Promise<void> } | null = null;
  let api: { close(): Promise<void> } | null = null;
  const stop = async (): Promise<void> => {
    await kube?.stop();
    await background?.stop();
    await api?.close();
    await database.close();
  };
  try {
    // Kubernetes mode: watchers, and the scheduler extender on the scheduler's port (QM_SCHEDULER_PORT, as
    // with `start:scheduler`; deploy/kube-scheduler/config.yaml). Imported only when selected:
    // @kubernetes/client-node and the watchers are ~0.7 s (quiet machine) to 1.5 s (load 9) of module loading.
    const kubeMode = config.kubeconfig ? await import('../../scheduler/src/kubernetes/kubernetes-mode.js') : null;
    const kubernetes = kubeMode ? await kubeMode.startKubernetesMode(config, database, settings.redisPrefix, logger) : null;
    kube = kubernetes;
    const leases = kubeMode ? kubeMode.kubernetesLeaderLease(config) : undefined;
    const role = await startRole('both', config, settings, {
      database,
      logger,
      migrate: false,
      ...(kubeMode ? { kubernetesHandlers: kubeMode.kubernetesHandlers(process.env) } : {}),
      ...(kubernetes ? { routes: (host: Parameters<typeof kubernetes.routes>[0]) => kubernetes.routes(host) } : {}),
      ...(leases ? { leases } : {}),
    });
    background = role;
    // The API's modules load once the first cycle has ended (or this process is a standby): loaded beside a
    // large first cycle's commit, they slowed it by a quarter (drain of 10,000 jobs, 2 cores). At most
    // QM_API_WAITS_FOR_FIRST_CYCLE_MS (5 s) after the start.
    await role.scheduler?.service.firstCycleSettled(settings.apiWaitsForFirstCycleMs);
    // createApiApp publishes a cycle trigger after each committed API write (debounced by the scheduler).
    const { createApiApp } = await import('../../api/src/api-app.js');
    const built = await createApiApp(config, { logger, scheduler: settings, database, migrate: false });
    api = built;
    await built.listen();
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return { stop };
});
