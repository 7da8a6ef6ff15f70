// `npm run start:scheduler`: the leader-elected scheduling loop (any number of replicas; one leads).
import { Config } from '#common';
import { schedulerSettingsFromEnv } from '#scheduling';
import { runMain, startRole } from './bootstrap.js';

runMain('quartermaster-scheduler', () => startRole('scheduler', Config.fromEnv(process.env), schedulerSettingsFromEnv(process.env)));
