// `npm run start:worker`: side-effect workers (any number of processes).
import { Config } from '#common';
import { schedulerSettingsFromEnv } from '#scheduling';
import { runMain, startRole } from './bootstrap.js';
import { kubernetesHandlers } from './kubernetes/kubernetes-mode.js';

runMain('quartermaster-worker', () => startRole('worker', Config.fromEnv(process.env), schedulerSettingsFromEnv(process.env), { kubernetesHandlers: kubernetesHandlers(process.env) }));
