// API + scheduler + side-effect worker in one process (what `npm start` runs): one Postgres pool, one
// logger; the scheduler still elects itself through the lease, so several such processes are safe.
import { createApiApp } from '../../api/src/api-app.js';
import { Config, createLogger } from '#common';
import { schedulerSettingsFromEnv } from '#scheduling';
import { runMain, startRole } from './bootstrap.js';
import { attachExtender, kubernetesHandlers, startKubernetesWatchers } from './kubernetes/kubernetes-mode.js';

runMain('quartermaster', async () => {
  const config = Config.fromEnv(process.env);
  const settings = schedulerSettingsFromEnv(process.env);
  const logger = createLogger(config.logLevel, 'quartermaster');
  const api = await createApiApp(config, { logger, scheduler: settings });
  // createApiApp publishes a cycle trigger after each committed API write (debounced by the scheduler).
  const background = await startRole('both', config, settings, { database: api.database, logger, migrate: false, kubernetesHandlers: kubernetesHandlers(process.env) });
  const kube = config.kubeconfig ? await startKubernetesWatchers(config, api.database, settings.redisPrefix, logger) : null;
  // Kubernetes mode: the scheduler extender is served by this process's API (deploy/kube-scheduler/config.yaml).
  if (kube) attachExtender(api.app.getHttpAdapter().getInstance(), config, api.database, () => kube.pods.pods(), logger);
  await api.listen();
  return {
    async stop() {
      await kube?.stop();
      await background.stop();
      await api.close();
    },
  };
});
