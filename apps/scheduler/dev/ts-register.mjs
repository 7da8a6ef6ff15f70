// `node --import ./apps/scheduler/dev/ts-register.mjs apps/scheduler/src/main.ts`
import { register } from 'node:module';
register('./ts-hooks.mjs', import.meta.url);
