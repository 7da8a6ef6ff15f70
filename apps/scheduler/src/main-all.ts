// API + scheduler + side-effect worker in one process (what `npm start` runs): one Postgres pool, one
// logger; the scheduler still elects itself through the lease, so several such processes are safe.
import { createApiApp } from '../../api/src/api-app.js';
import { Config, createLogger } from '#common';
import { schedulerSettingsFromEnv } from '#scheduling';
import { runMain, startRole } from './bootstrap.js';
import { kubernetesHandlers, kubernetesLeaderLease, startKubernetesMode } from './kubernetes/kubernetes-mode.js';

runMain('quartermaster', async () => {
  const config = Config.fromEnv(process.env);
  const settings = schedulerSettingsFromEnv(process.env);
  const logger = createLogger(config.logLevel, 'quartermaster');
  const api = await createApiApp(config, { logger, scheduler: settings });
  // createApiApp publishes a cycle trigger after each committed API write (debounced by the scheduler).
  // Kubernetes mode: watchers, and the scheduler extender on the scheduler's port (QM_SCHEDULER_PORT, as
  // with `start:scheduler`; deploy/kube-scheduler/config.yaml).
  const kube = config.kubeconfig ? await startKubernetesMode(config, api.database, settings.redisPrefix, logger) : null;
  const leases = kube ? kubernetesLeaderLease(config) : undefined;
  const background = await startRole('both', config, settings, {
    database: api.database,
    logger,
    migrate: false,
    kubernetesHandlers: kubernetesHandlers(process.env),
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
