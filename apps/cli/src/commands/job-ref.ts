import type { ApiClient } from '../client/api-client.js';
import { FINAL_STATES, type Job, type JobDetail, type List } from '#api-client';
import { CliFailure } from '../errors.js';
import { seg } from './common.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How many jobs of one name are looked at (newest first). */
const NAME_SCAN = 50;

/**
 * A job by id, or by name among the jobs the caller may see (of `team` when given; the API filters by name,
 * so a job is found however many others came after it). A name that
 * matches several jobs means the one of them that has not finished (a job resubmitted after a cancel or a
 * failure); when none or several have not finished, it is refused with their ids, never guessed.
 */
export async function resolveJob(client: ApiClient, given: string, team: string | undefined): Promise<JobDetail> {
  // `job/NAME` (or `job/ID`), as `-o name` prints it: `qm ls -o name | xargs qm cancel`.
  const ref = given.startsWith('job/') ? given.slice('job/'.length) : given;
  if (UUID.test(ref)) return client.get<JobDetail>(`/v1/jobs/${seg(ref)}`);
  const page = await client.get<List<Job>>('/v1/jobs', { team, name: ref, limit: NAME_SCAN });
  const matches = page.items.filter((j) => j.name === ref);
  if (matches.length === 0) {
    throw new CliFailure(`no job named ${ref}${team !== undefined ? ` in team ${team}` : ''}; use its id (qm ls shows ids)`);
  }
  const live = matches.filter((j) => !FINAL_STATES.has(j.state));
  if (matches.length > 1 && live.length === 1) return client.get<JobDetail>(`/v1/jobs/${seg(live[0]!.id)}`);
  if (matches.length > 1) {
    const ids = matches.slice(0, 5).map((j) => `${j.id} (${j.state.toLowerCase()}, team ${j.team})`);
    throw new CliFailure(`${matches.length} jobs are named ${ref}: ${ids.join(', ')}${matches.length > 5 ? ', …' : ''}${live.length > 1 ? ` (${live.length} of them not finished)` : ''}; use the id`);
  }
  return client.get<JobDetail>(`/v1/jobs/${seg(matches[0]!.id)}`);
}
