import { api } from '../api';
import { ChartView } from '../components/chart';
import { Freshness, Loaded } from '../components/status';
import { COLORS, num, reasonLabel, relative, when } from '../format';
import { usePoll } from '../poll';
import { Link } from '../router';
import type { Identity } from '../session';
import type { History, Overview, SchedulerStatus } from '../types';

const HOURS = 6;
const STEP_MINUTES = 15;

/** What the cluster is doing: capacity per flavor, the queue by reason, admissions and preemptions, the scheduler. */
export function OverviewPage({ identity }: { identity: Identity }) {
  const overview = usePoll(() => api<Overview>('/v1/overview'), 'overview');
  const scheduler = usePoll(() => api<SchedulerStatus>('/v1/scheduler'), 'scheduler');
  const history = usePoll(
    () => api<History>(`/v1/overview/history?hours=${HOURS}&stepMinutes=${STEP_MINUTES}`),
    'history',
    60_000,
  );
  const scope =
    identity.role === 'admin' ? 'all teams' : `your teams (${identity.teams.join(', ') || 'none'})`;
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title" tabIndex={-1}>
        Overview
      </h1>
      <Freshness polled={overview} every="10 s" />
      <Loaded polled={overview}>
        {(o) => (
          <>
            <div class="cards" role="list" aria-label="Jobs by state">
              {(['PENDING', 'ADMITTED', 'BINDING', 'RUNNING'] as const).map((s) => (
                <div class="card stat" role="listitem" key={s}>
                  <span class="value">{num(o.jobs[s] ?? 0)}</span>
                  <span class="label">{s.toLowerCase()} jobs</span>
                </div>
              ))}
            </div>
            <p class="muted small">
              Job counts and pending reasons cover {scope}; capacity covers the whole cluster.
            </p>
            <div class="grid2">
              <article class="panel">
                <h2>Accelerators per flavor</h2>
                {o.flavors.length === 0 ? (
                  <p class="muted">No flavors defined yet.</p>
                ) : (
                  <>
                    <ChartView
                      kind="bar"
                      horizontal
                      stacked
                      summary={o.flavors
                        .map(
                          (f) =>
                            `${f.flavor}: ${f.allocated} allocated, ${f.free} free, ${f.unschedulable} unschedulable of ${f.total}`,
                        )
                        .join('; ')}
                      labels={o.flavors.map((f) => f.flavor)}
                      series={[
                        {
                          label: 'allocated',
                          data: o.flavors.map((f) => f.allocated),
                          color: COLORS.blue,
                          stack: 'a',
                        },
                        {
                          label: 'free',
                          data: o.flavors.map((f) => f.free),
                          color: COLORS.green,
                          stack: 'a',
                        },
                        {
                          label: 'unschedulable (cordoned / not ready)',
                          data: o.flavors.map((f) => f.unschedulable),
                          color: COLORS.grey,
                          stack: 'a',
                        },
                      ]}
                      xTitle="accelerators"
                      yTitle="flavor"
                      height={Math.max(160, 60 + o.flavors.length * 36)}
                    />
                    <div class="scroll">
                      <table class="data">
                        <caption class="sr-only">Accelerators per flavor</caption>
                        <thead>
                          <tr>
                            <th scope="col">flavor</th>
                            <th scope="col">kind</th>
                            <th scope="col" class="num">
                              nodes
                            </th>
                            <th scope="col" class="num">
                              allocated
                            </th>
                            <th scope="col" class="num">
                              free
                            </th>
                            <th scope="col" class="num">
                              unschedulable
                            </th>
                            <th scope="col" class="num">
                              total
                            </th>
                          </tr>
                        </thead>
                        <tbody>
                          {o.flavors.map((f) => (
                            <tr key={f.flavor}>
                              <th scope="row">{f.flavor}</th>
                              <td>{f.kind}</td>
                              <td class="num">{num(f.nodes)}</td>
                              <td class="num">{num(f.allocated)}</td>
                              <td class="num">{num(f.free)}</td>
                              <td class="num">{num(f.unschedulable)}</td>
                              <td class="num">{num(f.total)}</td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    </div>
                  </>
                )}
              </article>
              <article class="panel">
                <h2>Pending jobs by reason</h2>
                {o.pendingByReason.length === 0 ? (
                  <p class="muted">Nothing is pending.</p>
                ) : (
                  <>
                    <ChartView
                      kind="bar"
                      horizontal
                      summary={o.pendingByReason
                        .map((r) => `${reasonLabel(r.code)}: ${r.jobs} jobs`)
                        .join('; ')}
                      labels={o.pendingByReason.map((r) => r.code ?? 'NOT_YET_CONSIDERED')}
                      series={[
                        {
                          label: 'pending jobs',
                          data: o.pendingByReason.map((r) => r.jobs),
                          color: COLORS.orange,
                        },
                      ]}
                      xTitle="jobs"
                      yTitle="reason code"
                      height={Math.max(140, 60 + o.pendingByReason.length * 32)}
                    />
                    <div class="scroll">
                      <table class="data">
                        <caption class="sr-only">Pending jobs by reason</caption>
                        <thead>
                          <tr>
                            <th scope="col">reason</th>
                            <th scope="col" class="num">
                              jobs
                            </th>
                            <th scope="col" class="num">
                              accelerators asked
                            </th>
                          </tr>
                        </thead>
                        <tbody>
                          {o.pendingByReason.map((r) => (
                            <tr key={r.code ?? 'none'}>
                              <th scope="row">
                                <code>{r.code ?? 'NOT_YET_CONSIDERED'}</code> {reasonLabel(r.code)}
                              </th>
                              <td class="num">{num(r.jobs)}</td>
                              <td class="num">{num(r.accelerators)}</td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    </div>
                    <p>
                      <Link to="/queue">See the queue in scheduler order →</Link>
                    </p>
                  </>
                )}
              </article>
            </div>
          </>
        )}
      </Loaded>
      <div class="grid2">
        <article class="panel">
          <h2>Admissions and preemptions, last {HOURS} h</h2>
          <Loaded polled={history}>
            {(h) => {
              const labels = h.buckets.map((b) =>
                new Date(b.at).toLocaleTimeString('en-US', {
                  hour: '2-digit',
                  minute: '2-digit',
                  hour12: false,
                }),
              );
              const admitted = h.buckets.reduce((s, b) => s + b.admitted, 0);
              const preempted = h.buckets.reduce((s, b) => s + b.preempted, 0);
              return (
                <>
                  <ChartView
                    kind="bar"
                    summary={`${admitted} jobs admitted and ${preempted} preempted in the last ${HOURS} hours, in ${STEP_MINUTES}-minute buckets`}
                    labels={labels}
                    series={[
                      { label: 'admitted', data: h.buckets.map((b) => b.admitted), color: COLORS.blue },
                      {
                        label: 'preempted',
                        data: h.buckets.map((b) => b.preempted),
                        color: COLORS.vermillion,
                      },
                    ]}
                    xTitle={`time (local), ${STEP_MINUTES}-minute buckets`}
                    yTitle={`jobs per ${STEP_MINUTES} min`}
                  />
                  <p class="small">
                    {num(admitted)} admitted, {num(preempted)} preempted,{' '}
                    {num(h.buckets.reduce((s, b) => s + b.cycles, 0))} scheduling cycles committed since{' '}
                    {when(h.since)}.
                  </p>
                </>
              );
            }}
          </Loaded>
        </article>
        <article class="panel">
          <h2>Scheduler</h2>
          <Loaded polled={scheduler}>
            {(s) => (
              <dl class="facts">
                <dt>Leader</dt>
                <dd>
                  {s.leader?.live ? (
                    <>
                      <code>{s.leader.holder}</code> <span class="badge ok">live</span>
                    </>
                  ) : s.leader &&
                    s.leader.holder !== '' &&
                    new Date(s.leader.expiresAt) > new Date(s.leader.renewedAt) ? (
                    <span class="badge bad">
                      none: {s.leader.holder}’s lease expired {relative(s.leader.expiresAt)}
                    </span>
                  ) : s.leader ? (
                    <span class="badge">
                      none running: the last leader released its lease {relative(s.leader.renewedAt)}
                    </span>
                  ) : (
                    <span class="badge bad">no scheduler has run yet</span>
                  )}
                </dd>
                <dt>Last cycle</dt>
                <dd>
                  {s.lastCycle ? (
                    <>
                      #{num(s.lastCycle.number)}, {relative(s.lastCycle.at)} ({when(s.lastCycle.at)}), took{' '}
                      {num(s.lastCycle.durationMs)} ms
                    </>
                  ) : (
                    'none yet'
                  )}
                </dd>
                {s.lastCycle && (
                  <>
                    <dt>Its decisions</dt>
                    <dd>
                      {num(s.lastCycle.admitted)} admitted, {num(s.lastCycle.preempted)} preempted,{' '}
                      {num(s.lastCycle.pending)} left pending
                    </dd>
                  </>
                )}
                <dt>Pending now</dt>
                <dd>
                  {num(s.pendingCount)} job{s.pendingCount === 1 ? '' : 's'} (all teams)
                </dd>
                {s.leader?.live && (
                  <>
                    <dt>Lease renewed</dt>
                    <dd>{relative(s.leader.renewedAt)}</dd>
                  </>
                )}
              </dl>
            )}
          </Loaded>
          <p class="muted small">
            The scheduler runs a cycle after every change that may let a job start, and on a steady tick.
          </p>
        </article>
      </div>
    </section>
  );
}
