import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { ErrorNote, Freshness, Loaded } from '../components/status';
import {
  STATE_LABELS,
  TERMINAL,
  cpu,
  duration,
  memory,
  num,
  reasonLabel,
  relative,
  size,
  when,
} from '../format';
import { roleRows } from '../job-roles';
import { usePoll } from '../poll';
import { Link } from '../router';
import type { Identity } from '../session';
import type { JobDetail as Job, JobEvent, Page, Placement } from '../types';

/** One job: where it is, why, its history, its placement; cancel. */
export function JobPage({ id, identity }: { id: string; identity: Identity }) {
  const job = usePoll(() => api<Job>(`/v1/jobs/${encodeURIComponent(id)}`), `job:${id}`, 5_000);
  const done = job.data !== null && TERMINAL.has(job.data.state);
  const events = usePoll(
    () => api<Page<JobEvent>>(`/v1/jobs/${encodeURIComponent(id)}/events`),
    `events:${id}:${job.data?.state ?? ''}`,
    done ? null : 10_000,
  );
  const placement = usePoll(
    () => api<Placement>(`/v1/jobs/${encodeURIComponent(id)}/placement`),
    `placement:${id}:${job.data?.state ?? ''}:${job.data?.allocation?.length ?? 0}`,
    null,
  );
  return (
    <section aria-labelledby="job-title">
      <p class="crumbs">
        <Link to="/queue">Queue</Link> / job
      </p>
      {job.data === null && job.error ? (
        <>
          <h1 id="job-title" tabIndex={-1}>
            Job {id}
          </h1>
          <ErrorNote error={job.error} />
        </>
      ) : job.data === null ? (
        <h1 id="job-title" tabIndex={-1}>
          Loading job…
        </h1>
      ) : (
        <JobBody job={job.data} identity={identity} onChanged={job.reload} />
      )}
      {job.data && (
        <>
          <Freshness polled={job} every={done ? undefined : '5 s'} />
          {job.data.roles !== null && <RolesView job={job.data} />}
          <div class="grid2">
            <article class="panel">
              <h2>State timeline</h2>
              <Timeline job={job.data} />
            </article>
            <article class="panel">
              <h2>Placement</h2>
              <Loaded polled={placement}>{(p) => <PlacementView placement={p} job={job.data!} />}</Loaded>
            </article>
          </div>
          <article class="panel">
            <h2>Events</h2>
            <Loaded polled={events}>
              {(e) =>
                e.items.length === 0 ? (
                  <p class="muted">No events yet.</p>
                ) : (
                  <div class="scroll">
                    <table class="data" id="events-table">
                      <caption class="sr-only">Decision log of this job, oldest first</caption>
                      <thead>
                        <tr>
                          <th scope="col">when</th>
                          <th scope="col">event</th>
                          <th scope="col">by</th>
                          <th scope="col">what happened</th>
                        </tr>
                      </thead>
                      <tbody>
                        {e.items.map((ev) => (
                          <tr key={ev.id}>
                            <td title={ev.at}>{when(ev.at)}</td>
                            <td>
                              <code>{ev.kind}</code>
                            </td>
                            <td>{ev.actor}</td>
                            <td>{ev.message}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                )
              }
            </Loaded>
          </article>
        </>
      )}
    </section>
  );
}

function JobBody({ job, identity, onChanged }: { job: Job; identity: Identity; onChanged: () => void }) {
  return (
    <>
      <h1 id="job-title" tabIndex={-1}>
        {job.name} <span class={`state s-${job.state.toLowerCase()}`}>{STATE_LABELS[job.state]}</span>
      </h1>
      <dl class="facts inline">
        <dt>Team</dt>
        <dd>{job.team}</dd>
        <dt>Kind</dt>
        <dd>{job.kind}</dd>
        <dt>Size</dt>
        <dd>
          {size(job)} accelerators
          {job.roles !== null ? ` in ${job.roles.length} roles` : ''}
          {job.minReplicas < job.replicas ? ` (elastic: at least ${job.minReplicas} replicas)` : ''}
        </dd>
        <dt>Flavors</dt>
        <dd>{job.flavors.join(' › ')}</dd>
        <dt>Priority</dt>
        <dd>
          {job.priority}
          {job.priorityClass ? ` (class ${job.priorityClass})` : ''}
          {job.preemptible ? ', preemptible' : ', not preemptible'}
        </dd>
        <dt>Topology</dt>
        <dd>
          {job.topology.tpuShape
            ? `TPU shape ${job.topology.tpuShape}`
            : job.topology.level === 'none'
              ? 'any'
              : `same ${job.topology.level}`}
        </dd>
        <dt>Submitted</dt>
        <dd>
          {when(job.submittedAt)} by {job.createdBy}
        </dd>
        {job.expectedRuntimeSeconds !== null && (
          <>
            <dt>Expected runtime</dt>
            <dd>{duration(job.expectedRuntimeSeconds * 1000)}</dd>
          </>
        )}
        <dt>Id</dt>
        <dd>
          <code>{job.id}</code>
        </dd>
      </dl>
      {job.state === 'PENDING' && job.pending && (
        <div class="note pending" id="pending-reason">
          <h2>Why it is pending</h2>
          <p>
            <strong>{reasonLabel(job.pending.code)}</strong>{' '}
            {job.pending.code && <code>{job.pending.code}</code>}
          </p>
          <p>{job.pending.message}</p>
          <p>
            {job.pending.position !== null ? <>Position {num(job.pending.position)} in the queue. </> : null}
            {job.pending.estimatedStartAt ? (
              <>
                Estimated start: <strong>{relative(job.pending.estimatedStartAt)}</strong> (
                {when(job.pending.estimatedStartAt)}).
              </>
            ) : (
              <>
                No start estimate yet (estimates come from reservations, which need running jobs’ expected
                runtimes).
              </>
            )}
          </p>
        </div>
      )}
      {job.preemptionCount > 0 && (
        <p class="note warn">
          Preempted {job.preemptionCount} time{job.preemptionCount === 1 ? '' : 's'}
          {job.preemptedBy && (
            <>
              , most recently by{' '}
              <Link to={`/jobs/${job.preemptedBy}`}>job {job.preemptedBy.slice(0, 8)}</Link>
            </>
          )}
          .
        </p>
      )}
      {!TERMINAL.has(job.state) && (identity.role === 'admin' || identity.teams.includes(job.team)) && (
        <CancelButton job={job} onDone={onChanged} />
      )}
    </>
  );
}

function CancelButton({ job, onDone }: { job: Job; onDone: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const cancel = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await api(`/v1/jobs/${encodeURIComponent(job.id)}`, { method: 'DELETE' });
      setConfirming(false);
      onDone();
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'CLIENT', String(e)));
    } finally {
      setBusy(false);
    }
  };
  if (!confirming) {
    return (
      <p>
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Cancel job…
        </button>
      </p>
    );
  }
  return (
    <div class="note warn" role="group" aria-labelledby="cancel-q">
      <p id="cancel-q">
        Cancel <strong>{job.name}</strong>?{' '}
        {job.state === 'PENDING'
          ? 'It leaves the queue.'
          : 'Its pods are deleted and its accelerators released.'}{' '}
        This cannot be undone.
      </p>
      {error && <ErrorNote error={error} />}
      <button type="button" class="danger" disabled={busy} onClick={() => void cancel()} autoFocus>
        {busy ? 'Cancelling…' : 'Yes, cancel the job'}
      </button>{' '}
      <button type="button" onClick={() => setConfirming(false)}>
        Keep it
      </button>
    </div>
  );
}

/** A multi-role gang's roles (ADR 0024): each role's count, minimum, shape per replica and, once admitted, its nodes. */
function RolesView({ job }: { job: Job }) {
  const rows = roleRows(job);
  if (rows === null) return null;
  const admitted = rows.some((r) => r.admitted !== null);
  const placed = rows.some((r) => r.nodes.length > 0);
  return (
    <article class="panel">
      <h2>Roles</h2>
      <div class="scroll">
        <table class="data" id="roles-table">
          <caption class="sr-only">
            Roles of this gang: replicas{admitted ? ' admitted of asked' : ''}, the least it starts with, and
            each replica’s accelerators, CPU and memory{placed ? ', and the nodes they are on' : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">role</th>
              <th scope="col" class="num">
                {admitted ? 'replicas admitted / asked' : 'replicas'}
              </th>
              <th scope="col" class="num">
                at least
              </th>
              <th scope="col" class="num">
                accelerators per replica
              </th>
              <th scope="col" class="num">
                CPU per replica
              </th>
              <th scope="col" class="num">
                memory per replica
              </th>
              {placed && <th scope="col">nodes</th>}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.name} data-role={r.name}>
                <th scope="row">{r.name}</th>
                <td class="num">
                  {r.admitted !== null ? `${num(r.admitted)} / ${num(r.replicas)}` : num(r.replicas)}
                </td>
                <td class="num">{num(r.minReplicas)}</td>
                <td class="num">{num(r.acceleratorsPerReplica)}</td>
                <td class="num" title={`${num(r.cpuMillisPerReplica)} millicores`}>
                  {cpu(r.cpuMillisPerReplica)}
                </td>
                <td class="num" title={`${num(r.memoryMiBPerReplica)} MiB`}>
                  {memory(r.memoryMiBPerReplica)}
                </td>
                {placed && (
                  <td>
                    {r.nodes.length === 0 ? (
                      <span class="muted">none</span>
                    ) : (
                      r.nodes.map((n, i) => (
                        <Fragment key={n}>
                          {i > 0 && ', '}
                          <code>{n}</code>
                        </Fragment>
                      ))
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </article>
  );
}

function Timeline({ job }: { job: Job }) {
  const steps = job.transitions ?? [];
  if (steps.length === 0) return <p class="muted">No transitions recorded.</p>;
  const end = TERMINAL.has(job.state) ? null : Date.now();
  return (
    <ol class="timeline" id="timeline">
      {steps.map((t, i) => {
        const next = steps[i + 1];
        const until = next ? new Date(next.at).getTime() : end;
        return (
          <li key={`${t.at}-${i}`} class={`s-${t.to.toLowerCase()}`}>
            <span class={`state s-${t.to.toLowerCase()}`}>{STATE_LABELS[t.to]}</span>{' '}
            <time dateTime={t.at} title={t.at}>
              {when(t.at)}
            </time>
            {until !== null && (
              <span class="muted small">
                {' '}
                · {next ? 'for' : 'so far'} {duration(until - new Date(t.at).getTime())}
              </span>
            )}
            {t.reason && <div class="small">{t.reason}</div>}
          </li>
        );
      })}
    </ol>
  );
}

function PlacementView({ placement, job }: { placement: Placement; job: Job }) {
  if (placement.items.length === 0) {
    return (
      <p class="muted">
        {job.state === 'PENDING'
          ? 'Not placed yet: it is waiting in the queue.'
          : 'It holds no accelerators now.'}
      </p>
    );
  }
  // A multi-role gang's replicas each carry their role (in the job's allocation, by replica number).
  const roleOf = new Map((job.roles === null ? [] : job.allocation).map((a) => [a.replica, a.role]));
  const withRoles = job.roles !== null;
  // Group replicas by topology domain (zone / block / domain), then node (and role).
  const groups = new Map<string, Placement['items']>();
  for (const p of placement.items) {
    const key =
      [
        p.zone && `zone ${p.zone}`,
        p.block && `block ${p.block}`,
        p.domain && `domain ${p.domain}`,
        p.tpuShape && `TPU ${p.tpuShape}`,
      ]
        .filter(Boolean)
        .join(' › ') || 'no topology labels';
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  return (
    <>
      <p>
        On <strong>{placement.flavor}</strong>: {placement.items.length} replica
        {placement.items.length === 1 ? '' : 's'} on {nodeCount(placement)} in {groups.size} topology domain
        {groups.size === 1 ? '' : 's'}.
      </p>
      <div class="scroll">
        <table class="data" id="placement-table">
          <caption class="sr-only">Replicas by topology domain and node</caption>
          <thead>
            <tr>
              <th scope="col">topology domain</th>
              <th scope="col">node</th>
              {withRoles && <th scope="col">role</th>}
              <th scope="col">replica</th>
              <th scope="col" class="num">
                accelerators
              </th>
            </tr>
          </thead>
          <tbody>
            {[...groups.entries()].flatMap(([domain, items]) => {
              const byNode = new Map<
                string,
                { node: string; role: string | null; reps: Placement['items'] }
              >();
              for (const p of items) {
                const role = roleOf.get(p.replica) ?? null;
                const key = withRoles ? `${p.node}\u0000${role ?? ''}` : p.node;
                const row = byNode.get(key) ?? { node: p.node, role, reps: [] };
                row.reps.push(p);
                byNode.set(key, row);
              }
              return [...byNode.entries()].map(([key, { node, role, reps }], i) => (
                <tr key={`${domain}/${key}`}>
                  {i === 0 ? (
                    <th scope="rowgroup" rowSpan={byNode.size}>
                      {domain}
                    </th>
                  ) : null}
                  <td>
                    <code>{node}</code>
                  </td>
                  {withRoles && <td>{role ?? <span class="muted">unknown</span>}</td>}
                  <td>{reps.map((r) => r.replica).join(', ')}</td>
                  <td class="num">{num(reps.reduce((s, r) => s + r.accelerators, 0))}</td>
                </tr>
              ));
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

function nodeCount(placement: Placement): string {
  const n = new Set(placement.items.map((p) => p.node)).size;
  return `${n} node${n === 1 ? '' : 's'}`;
}
