// `npm run start:scheduler`: the leader-elected scheduling loop (any number of replicas; one leads).
import { Config } from '#common';
import { parseFailpoints, schedulerSettingsFromEnv } from '#scheduling';
import { runMain, startRole } from './bootstrap.js';

runMain('quartermaster-scheduler', () => {
  // Test-only crash points (QM_TEST_FAILPOINTS=after-commit:0.3); unset in production.
  const failpoint = parseFailpoints(process.env['QM_TEST_FAILPOINTS'], () => process.kill(process.pid, 'SIGKILL'));
  return startRole('scheduler', Config.fromEnv(process.env), schedulerSettingsFromEnv(process.env), failpoint ? { failpoint } : {});
});
