import { describe, expect, it } from '@jest/globals';
import { triggerReasonFor } from './cycle-trigger-routes.js';

describe('triggerReasonFor', () => {
  it.each([
    ['POST', '/v1/jobs', 201, 'job.submitted'],
    ['POST', '/v1/jobs', 200, 'job.submitted'],
    ['DELETE', '/v1/jobs/:id', 200, 'job.cancelled'],
    ['POST', '/v1/jobs/:id/status', 200, 'job.status'],
    ['POST', '/v1/jobs/:id/priority', 200, 'job.submitted'],
    ['PUT', '/v1/teams/:team/quotas/:flavor', 200, 'quota.changed'],
    ['DELETE', '/v1/teams/:team/quotas/:flavor', 204, 'quota.changed'],
    ['PUT', '/v1/teams/:name', 201, 'team.changed'],
    ['PUT', '/v1/cohorts/:name', 200, 'team.changed'],
    ['PUT', '/v1/nodes/:name', 200, 'node.changed'],
    ['PUT', '/v1/flavors/:name', 201, 'flavor.changed'],
  ])('%s %s → %s %s', (method, route, status, want) => {
    expect(triggerReasonFor(method, route, status)).toBe(want);
  });

  it.each([
    ['GET', '/v1/jobs', 200],
    ['POST', '/v1/jobs', 400],
    ['POST', '/v1/jobs', 422],
    ['POST', '/v1/tokens', 201],
    ['POST', '/v1/scheduler/cycles', 200],
    ['GET', '/v1/jobs/:id/events', 200],
  ])('%s %s (%s) triggers nothing', (method, route, status) => {
    expect(triggerReasonFor(method, route, status)).toBeNull();
  });
});
