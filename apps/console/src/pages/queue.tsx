import { api, withQuery } from '../api';
import { Freshness, Loaded } from '../components/status';
import { STATE_LABELS, duration, num, reasonLabel, relative, size, when } from '../format';
import { admittedAccelerators } from '../job-roles';
import { usePoll } from '../poll';
import { Link, navigate, useLocation } from '../router';
import type { Identity } from '../session';
import type { Flavor, Job, Page, QueuePage as QueueAnswer, Team } from '../types';

const PAGE = 50;
const HOLDING = 'ADMITTED,BINDING,RUNNING';
const STATES = [
  { value: '', label: 'Pending and running' },
  { value: 'PENDING', label: 'Pending' },
  { value: HOLDING, label: 'Admitted, binding or running' },
  { value: 'ADMITTED', label: 'Admitted' },
  { value: 'BINDING', label: 'Binding' },
  { value: 'RUNNING', label: 'Running' },
];

/** Pending jobs in the order the scheduler will consider them, and the jobs holding accelerators. */
export function QueuePage({ identity }: { identity: Identity }) {
  const { query } = useLocation();
  const team = query.get('team') ?? '';
  const flavor = query.get('flavor') ?? '';
  const state = query.get('state') ?? '';
  const offset = Math.max(0, Number(query.get('offset') ?? 0) || 0);
  const set = (patch: Record<string, string>): void => {
    const next = new URLSearchParams(query);
    for (const [k, v] of Object.entries(patch))
      if (v === '') next.delete(k);
      else next.set(k, v);
    if (!('offset' in patch)) next.delete('offset');
    const qs = next.toString();
    navigate(`/queue${qs ? `?${qs}` : ''}`, { replace: true });
  };
  const flavors = usePoll(() => api<Page<Flavor>>('/v1/flavors'), 'flavors', null);
  const teams = usePoll(() => api<Page<Team>>('/v1/teams'), 'teams', null);
  const teamChoices =
    identity.role === 'admin' ? (teams.data?.items.map((t) => t.name) ?? []) : identity.teams;
  const showPending = state === '' || state === 'PENDING';
  const holdingStates = state === '' ? HOLDING : state === 'PENDING' ? null : state;
  return (
    <section aria-labelledby="queue-title">
      <h1 id="queue-title" tabIndex={-1}>
        Queue
      </h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <label>
          Team{' '}
          <select value={team} onChange={(e) => set({ team: e.currentTarget.value })}>
            <option value="">{identity.role === 'admin' ? 'All teams' : 'All my teams'}</option>
            {teamChoices.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Flavor{' '}
          <select value={flavor} onChange={(e) => set({ flavor: e.currentTarget.value })}>
            <option value="">All flavors</option>
            {(flavors.data?.items ?? []).map((f) => (
              <option key={f.name} value={f.name}>
                {f.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          State{' '}
          <select value={state} onChange={(e) => set({ state: e.currentTarget.value })}>
            {STATES.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
      </form>
      {showPending && (
        <PendingTable
          team={team}
          flavor={flavor}
          offset={state === 'PENDING' ? offset : 0}
          paged={state === 'PENDING'}
          onPage={(o) => set({ offset: String(o) })}
        />
      )}
      {holdingStates !== null && (
        <HoldingTable
          team={team}
          flavor={flavor}
          states={holdingStates}
          offset={state === '' ? 0 : offset}
          paged={state !== ''}
          onPage={(o) => set({ offset: String(o) })}
        />
      )}
    </section>
  );
}

interface TableProps {
  team: string;
  flavor: string;
  offset: number;
  paged: boolean;
  onPage: (offset: number) => void;
}

function PendingTable({ team, flavor, offset, paged, onPage }: TableProps) {
  const path = withQuery('/v1/queue', { state: 'PENDING', team, flavor, limit: PAGE, offset });
  const polled = usePoll(() => api<QueueAnswer>(path), path);
  return (
    <article class="panel" aria-labelledby="pending-title">
      <h2 id="pending-title">Pending, in scheduler order</h2>
      <Freshness polled={polled} every="10 s" />
      <Loaded polled={polled}>
        {(q) =>
          q.items.length === 0 ? (
            <p class="muted">No pending jobs{team || flavor ? ' match these filters' : ''}.</p>
          ) : (
            <>
              <div class="scroll">
                <table class="data" id="pending-table">
                  <caption class="sr-only">Pending jobs in the order the scheduler considers them</caption>
                  <thead>
                    <tr>
                      <th scope="col" class="num">
                        position
                      </th>
                      <th scope="col">job</th>
                      <th scope="col">team</th>
                      <th scope="col" class="num">
                        replicas × accelerators
                      </th>
                      <th scope="col">flavors</th>
                      <th scope="col" class="num">
                        priority
                      </th>
                      <th scope="col">why pending</th>
                      <th scope="col">estimated start</th>
                      <th scope="col">waiting</th>
                    </tr>
                  </thead>
                  <tbody>
                    {q.items.map((j) => (
                      <tr key={j.id} data-job={j.id}>
                        <td class="num">{j.pending?.position ?? '—'}</td>
                        <th scope="row">
                          <Link to={`/jobs/${j.id}`}>{j.name}</Link>
                        </th>
                        <td>{j.team}</td>
                        <td class="num">{size(j)}</td>
                        <td>{j.flavors.join(', ')}</td>
                        <td class="num" title={j.priorityClass ? `class ${j.priorityClass}` : undefined}>{j.priority}</td>
                        <td class="reason">
                          <strong>{reasonLabel(j.pending?.code ?? null)}</strong>
                          <span class="small muted">{j.pending?.code ? ` (${j.pending.code})` : ''}</span>
                          <div class="small">{j.pending?.message}</div>
                        </td>
                        <td>{eta(j)}</td>
                        <td title={when(j.queuedAt)}>
                          {duration(Date.now() - new Date(j.queuedAt).getTime())}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager
                total={q.total}
                offset={offset}
                count={q.items.length}
                paged={paged}
                onPage={onPage}
                what="pending jobs"
              />
            </>
          )
        }
      </Loaded>
    </article>
  );
}

function eta(j: Job) {
  const at = j.pending?.estimatedStartAt;
  if (!at) return <span class="muted small">not estimated yet</span>;
  return (
    <span title={when(at)}>
      {relative(at)} <span class="small muted">({when(at)})</span>
    </span>
  );
}

function HoldingTable({ team, flavor, states, offset, paged, onPage }: TableProps & { states: string }) {
  const path = withQuery('/v1/queue', { state: states, team, flavor, limit: PAGE, offset });
  const polled = usePoll(() => api<QueueAnswer>(path), path);
  const title = states === HOLDING ? 'Admitted and running' : (STATE_LABELS[states] ?? states);
  return (
    <article class="panel" aria-labelledby="holding-title">
      <h2 id="holding-title">{title}</h2>
      <Freshness polled={polled} every="10 s" />
      <Loaded polled={polled}>
        {(q) =>
          q.items.length === 0 ? (
            <p class="muted">
              No {title.toLowerCase()} jobs{team || flavor ? ' match these filters' : ''}.
            </p>
          ) : (
            <>
              <div class="scroll">
                <table class="data" id="running-table">
                  <caption class="sr-only">{title} jobs, longest running first</caption>
                  <thead>
                    <tr>
                      <th scope="col">job</th>
                      <th scope="col">team</th>
                      <th scope="col">state</th>
                      <th scope="col">flavor</th>
                      <th scope="col" class="num">
                        accelerators
                      </th>
                      <th scope="col">age</th>
                      <th scope="col">expected to end</th>
                    </tr>
                  </thead>
                  <tbody>
                    {q.items.map((j) => {
                      const since = j.startedAt ?? j.admittedAt ?? j.submittedAt;
                      return (
                        <tr key={j.id} data-job={j.id}>
                          <th scope="row">
                            <Link to={`/jobs/${j.id}`}>{j.name}</Link>
                          </th>
                          <td>{j.team}</td>
                          <td>
                            <span class={`state s-${j.state.toLowerCase()}`}>{STATE_LABELS[j.state]}</span>
                          </td>
                          <td>{j.flavor ?? '—'}</td>
                          <td class="num">{num(admittedAccelerators(j))}</td>
                          <td title={`${j.startedAt ? 'running' : 'admitted'} since ${when(since)}`}>
                            {duration(Date.now() - new Date(since).getTime())}
                          </td>
                          <td>
                            {j.expectedRuntimeSeconds !== null ? (
                              relative(
                                new Date(
                                  new Date(since).getTime() + j.expectedRuntimeSeconds * 1000,
                                ).toISOString(),
                              )
                            ) : (
                              <span class="muted small">no runtime given</span>
                            )}
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
              <Pager
                total={q.total}
                offset={offset}
                count={q.items.length}
                paged={paged}
                onPage={onPage}
                what="jobs"
              />
            </>
          )
        }
      </Loaded>
    </article>
  );
}

function Pager({
  total,
  offset,
  count,
  paged,
  onPage,
  what,
}: {
  total: number;
  offset: number;
  count: number;
  paged: boolean;
  onPage: (o: number) => void;
  what: string;
}) {
  return (
    <p class="pager">
      Showing {num(offset + 1)}–{num(offset + count)} of {num(total)} {what}.{' '}
      {paged ? (
        <>
          <button type="button" disabled={offset === 0} onClick={() => onPage(Math.max(0, offset - PAGE))}>
            Previous
          </button>{' '}
          <button type="button" disabled={offset + count >= total} onClick={() => onPage(offset + PAGE)}>
            Next
          </button>
        </>
      ) : (
        total > count && <span class="muted">Choose a state above to page through all of them.</span>
      )}
    </p>
  );
}
