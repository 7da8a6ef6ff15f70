// API + scheduler + side-effect worker in one process (what `npm start` runs): one Postgres pool, one
// logger; the scheduler still elects itself through the lease, so several such processes are safe.
import { createApiApp } from '../../api/src/api-app.js';
import { Config, createLogger } from '#common';
import { schedulerSettingsFromEnv } from '#scheduling';
import { runMain, startRole } from './bootstrap.js';

runMain('quartermaster', async () => {
  const config = Config.fromEnv(process.env);
  const settings = schedulerSettingsFromEnv(process.env);
  const logger = createLogger(config.logLevel, 'quartermaster');
  const api = await createApiApp(config, { logger, scheduler: settings });
  // createApiApp publishes a cycle trigger after each committed API write (debounced by the scheduler).
  // Kubernetes mode: watchers, and the scheduler extender on the scheduler's port (QM_SCHEDULER_PORT, as
  // with `start:scheduler`; deploy/kube-scheduler/config.yaml).
  // Kubernetes mode is imported only when selected: @kubernetes/client-node and the watchers are ~0.7 s
  // (quiet machine) to 1.5 s (load 9) of module loading before a standalone scheduler's first cycle.
  const kubeMode = config.kubeconfig ? await import('./kubernetes/kubernetes-mode.js') : null;
  const kube = kubeMode ? await kubeMode.startKubernetesMode(config, api.database, settings.redisPrefix, logger) : null;
  const leases = kubeMode ? kubeMode.kubernetesLeaderLease(config) : undefined;
  const background = await startRole('both', config, settings, {
    database: api.database,
    logger,
    migrate: false,
    ...(kubeMode ? { kubernetesHandlers: kubeMode.kubernetesHandlers(process.env) } : {}),
    ...(kube ? { routes: (host: Parameters<typeof kube.routes>[0]) => kube.routes(host) } : {}),
    ...(leases ? { leases } : {}),
  });
  await api.listen();
  return {
    async stop() {
      await kube?.stop();
      await background.stop();
      await api.close();
    },
  };
});
