import type { Logger } from 'pino';
import { Counter, register } from 'prom-client';
import type { ExtenderService } from './extender-service.js';
import type { ExtenderArgs, ExtenderBindingArgs, ExtenderPreemptionArgs } from './extender-types.js';

/** The part of a Fastify instance the routes need. */
export interface RouteHost {
  post(path: string, handler: (request: { body: unknown }, reply: { code(status: number): { send(body: unknown): unknown } }) => Promise<unknown>): unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const REQUESTS = 'qm_extender_requests_total';

/** kube-scheduler's calls by verb and outcome (ok, bad_request, error), on the global registry. */
function requestCounter(): Counter<'verb' | 'outcome'> {
  return (register.getSingleMetric(REQUESTS) as Counter<'verb' | 'outcome'> | undefined) ??
    new Counter({ name: REQUESTS, help: 'Scheduler-extender calls from kube-scheduler, by verb and outcome (ok, bad_request, error)', labelNames: ['verb', 'outcome'] });
}

/**
 * POST /extender/filter, /prioritize, /bind, /preempt on the scheduler process's Fastify instance (the
 * path the deploy/kube-scheduler config's urlPrefix names). A body that is not a JSON object → 400 with
 * the reason; kube-scheduler treats a non-200 as an extender error.
 */
export function registerExtenderRoutes(host: RouteHost, service: ExtenderService, logger: Logger): void {
  const requests = requestCounter();
  const route = <A>(verb: string, run: (args: A) => Promise<unknown>): void => {
    host.post(`/extender/${verb}`, async (request, reply) => {
      if (!isObject(request.body)) {
        requests.inc({ verb, outcome: 'bad_request' });
        return reply.code(400).send({ Error: `extender ${verb}: the body must be a JSON object` });
      }
      try {
        const result = await run(request.body as A);
        requests.inc({ verb, outcome: 'ok' });
        return result;
      } catch (error) {
        requests.inc({ verb, outcome: 'error' });
        logger.warn({ err: error, verb }, 'extender call failed');
        return reply.code(500).send({ Error: error instanceof Error ? error.message : String(error) });
      }
    });
  };
  route<ExtenderArgs>('filter', (args) => service.filter(args));
  route<ExtenderArgs>('prioritize', (args) => service.prioritize(args));
  route<ExtenderBindingArgs>('bind', (args) => service.bind(args));
  route<ExtenderPreemptionArgs>('preempt', (args) => Promise.resolve(service.preempt(args)));
}
