import { describe, expect, it } from '@jest/globals';
import { NotReadyYetError } from '#scheduling';
import { WaitingForNodeError, WaitingForVictimsError } from './pod-side-effects.js';
import { WaitingForWorkloadPodsError } from './workload-pods.js';

// A bind that waits for another actor — a workload's controller making its pods, the kubelet removing a victim's
// pods within their grace period — is not a failure: the side-effect worker looks again soon without spending
// the queue's attempts (side-effects.test.ts shows how), instead of backing off to its 30 s slow retry.
describe('the waits of a bind', () => {
  it.each([
    ['a gang whose pods are not all made yet', new WaitingForWorkloadPodsError('waiting for 3 of 8 pods')],
    ['a preemptor whose victims’ pods have not gone yet', new WaitingForVictimsError('waiting for 2 pod(s) of preempted gangs to go')],
    ['pods still terminating on the allocated nodes', new WaitingForNodeError('node n1: 1 pod terminating')],
  ])('%s is not ready yet, not failed', (_what, error) => {
    expect(error).toBeInstanceOf(NotReadyYetError);
  });
});
