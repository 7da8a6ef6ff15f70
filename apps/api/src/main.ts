import { pathToFileURL } from 'node:url';
import { Config, ConfigError } from '#common';
import { SchedulerSettingsError, schedulerSettingsFromEnv } from '#scheduling';
import { createApiApp, StartupError } from './api-app.js';

export { createApiApp, StartupError, type ApiApp, type ApiAppOptions } from './api-app.js';
export { ApiModule } from './app.module.js';

/**
 * `npm run start:api`: the API alone. Configuration is read once from the environment here; a bad
 * setting or an unreachable dependency ends the process with one line on stderr and exit code 1.
 */
export async function startApi(env: NodeJS.ProcessEnv): Promise<void> {
  try {
    const config = Config.fromEnv(env);
    const api = await createApiApp(config, { scheduler: schedulerSettingsFromEnv(env) });
    await api.listen();
    const stop = (): void => {
      api.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof StartupError || error instanceof SchedulerSettingsError) {
      process.stderr.write(`quartermaster: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  startApi(process.env).catch((error: unknown) => {
    process.stderr.write(`quartermaster: failed to start: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n`);
    process.exit(1);
  });
}
