// `npm run start:scheduler`: the leader-elected scheduling loop (any number of replicas; one leads).
// In Kubernetes mode (KUBECONFIG) the node/pod watchers and gang import run next to it, and its HTTP
// server (QM_SCHEDULER_PORT) also serves the scheduler extender that kube-scheduler calls.
import { Config, createLogger } from '#common';
import { Database, migrateDatabase } from '#db';
import { parseFailpoints, schedulerSettingsFromEnv } from '#scheduling';
import { runMain, startRole } from './bootstrap.js';

runMain('quartermaster-scheduler', async () => {
  // Test-only crash points (QM_TEST_FAILPOINTS=after-commit:0.3); unset in production.
  const failpoint = parseFailpoints(process.env['QM_TEST_FAILPOINTS'], () => process.kill(process.pid, 'SIGKILL'));
  const config = Config.fromEnv(process.env);
  const settings = schedulerSettingsFromEnv(process.env);
  const options = failpoint ? { failpoint } : {};
  if (!config.kubeconfig) return startRole('scheduler', config, settings, options);

  // Imported only in Kubernetes mode (see apps/server/src/main.ts).
  const { kubernetesLeaderLease, startKubernetesMode } = await import('./kubernetes/kubernetes-mode.js');
  const logger = createLogger(config.logLevel, 'quartermaster-scheduler');
  await migrateDatabase(config.databaseUrl); // the watchers write nodes and jobs before the role starts
  const database = new Database(config.databaseUrl, { poolSize: 4, applicationName: 'quartermaster-kube', ...config.dbTimeouts });
  try {
    const kube = await startKubernetesMode(config, database, settings.redisPrefix, logger);
    const leases = kubernetesLeaderLease(config);
    const role = await startRole('scheduler', config, settings, { ...options, logger, migrate: false, routes: (host) => kube.routes(host), ...(leases ? { leases } : {}) }).catch(async (error: unknown) => {
      await kube.stop();
      throw error;
    });
    return {
      async stop() {
        await role.stop();
        await kube.stop();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
});
