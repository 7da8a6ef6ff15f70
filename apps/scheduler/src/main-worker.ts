// `npm run start:worker`: side-effect workers (any number of processes).
import { Config } from '#common';
import { schedulerSettingsFromEnv } from '#scheduling';
import { runMain, startRole } from './bootstrap.js';

// Kubernetes mode's handlers are imported only when that mode is selected (see apps/server/src/main.ts).
runMain('quartermaster-worker', () =>
  startRole('worker', Config.fromEnv(process.env), schedulerSettingsFromEnv(process.env), {
    kubernetesHandlers: async (config, database, logger) => (await import('./kubernetes/kubernetes-mode.js')).kubernetesHandlers(process.env)(config, database, logger),
  }),
);
