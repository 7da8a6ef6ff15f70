// `npm run start:scheduler`: the leader-elected scheduling loop (any number of replicas; one leads).
import { Config } from '#common';
import { parseFailpoints, schedulerSettingsFromEnv } from '#scheduling';
import { runMain, startRole } from './bootstrap.js';
import { withKubernetesWatchers } from './kubernetes/kubernetes-mode.js';

runMain('quartermaster-scheduler', () => {
  // Test-only crash points (QM_TEST_FAILPOINTS=after-commit:0.3); unset in production.
  const failpoint = parseFailpoints(process.env['QM_TEST_FAILPOINTS'], () => process.kill(process.pid, 'SIGKILL'));
  const config = Config.fromEnv(process.env);
  const settings = schedulerSettingsFromEnv(process.env);
  // Kubernetes mode (KUBECONFIG): node sync, pod phases and gang import run next to the scheduler.
  return withKubernetesWatchers(config, settings.redisPrefix, () => startRole('scheduler', config, settings, failpoint ? { failpoint } : {}));
});
