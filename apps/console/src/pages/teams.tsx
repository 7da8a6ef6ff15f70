import { useState } from 'preact/hooks';
import { api, ApiError, type FieldError, withQuery } from '../api';
import { ChartView } from '../components/chart';
import { ErrorNote, Freshness, Loaded } from '../components/status';
import { COLORS, num, when } from '../format';
import { usePoll } from '../poll';
import type { Identity } from '../session';
import type { AuditEntry, Budget, Flavor, Page, QuotaUsage, Team } from '../types';
import { BudgetsPanel } from './budgets';

const limitText = (n: number | null): string => (n === null ? 'no limit' : num(n));

/** Per team and flavor: used / nominal / borrowed / lent / pending demand; quota edits (admins) and their audit trail. */
export function TeamsPage({ identity }: { identity: Identity }) {
  const teams = usePoll(() => api<Page<Team>>('/v1/teams'), 'teams');
  const audit = usePoll(
    () => api<{ items: AuditEntry[] }>(withQuery('/v1/audit', { limit: 50 })),
    'audit',
    30_000,
  );
  const flavors = usePoll(() => api<Page<Flavor>>('/v1/flavors'), 'flavors', null);
  const budgets = usePoll(() => api<{ items: Budget[] }>('/v1/budgets'), 'budgets', 30_000);
  const mine = (t: Team): boolean => identity.role === 'admin' || identity.teams.includes(t.name);
  return (
    <section aria-labelledby="teams-title">
      <h1 id="teams-title" tabIndex={-1}>
        Teams and quotas
      </h1>
      <Freshness polled={teams} every="10 s" />
      <p class="muted small">
        Bars count accelerators. <strong>Nominal</strong> is guaranteed; a team may <strong>borrow</strong>{' '}
        idle quota of its cohort (up to its borrowing limit) and <strong>lend</strong> its own idle quota (up
        to its lending limit). <strong>Pending demand</strong> is what its queued jobs ask for.
      </p>
      <Loaded polled={teams}>
        {(t) =>
          t.items.length === 0 ? (
            <p class="muted">No teams yet.</p>
          ) : (
            <div class="grid2">
              {[...t.items]
                .sort((a, b) => Number(mine(b)) - Number(mine(a)) || a.name.localeCompare(b.name))
                .map((team) => (
                  <TeamCard key={team.name} team={team} />
                ))}
            </div>
          )
        }
      </Loaded>
      {identity.role === 'admin' && teams.data && flavors.data && (
        <QuotaEditor
          teams={teams.data.items}
          flavors={flavors.data.items}
          onSaved={() => {
            teams.reload();
            audit.reload();
          }}
        />
      )}
      <article class="panel" aria-labelledby="audit-title">
        <h2 id="audit-title">Quota and budget changes (audit trail)</h2>
        <p class="muted small">
          {identity.role === 'admin' ? 'Every team.' : 'Your teams.'} Newest first; who changed what, from
          what, to what.
        </p>
        <Loaded polled={audit}>
          {(a) =>
            a.items.length === 0 ? (
              <p class="muted">No quota or budget changes recorded.</p>
            ) : (
              <div class="scroll">
                <table class="data" id="audit-table">
                  <caption class="sr-only">Quota and budget changes, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">when</th>
                      <th scope="col">team</th>
                      <th scope="col">what</th>
                      <th scope="col">by</th>
                      <th scope="col">change</th>
                    </tr>
                  </thead>
                  <tbody>
                    {a.items.map((e) => (
                      <tr key={e.id} data-event={e.id}>
                        <td title={e.at}>{when(e.at)}</td>
                        <td>{e.team}</td>
                        <td>
                          {e.kind.startsWith('budget.')
                            ? `${typeof e.data.period === 'string' ? e.data.period : ''} budget`
                            : e.kind.startsWith('quota.')
                              ? `quota of ${typeof e.data.flavor === 'string' ? e.data.flavor : '?'}`
                              : e.kind.replace('.', ' ')}
                        </td>
                        <td>{e.actor}</td>
                        <td>
                          {e.kind.startsWith('budget.') ? (
                            <BudgetDiff
                              before={e.data.before as BudgetRecord | null}
                              after={e.data.after as BudgetRecord | null}
                            />
                          ) : !e.kind.startsWith('quota.') ? (
                            e.message
                          ) : (
                            <QuotaDiff
                              before={e.data.before as QuotaUsage | null}
                              after={e.data.after as QuotaUsage | null}
                            />
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )
          }
        </Loaded>
      </article>
      <BudgetsPanel
        identity={identity}
        budgets={budgets}
        teams={teams.data?.items ?? []}
        onSaved={() => {
          budgets.reload();
          audit.reload();
        }}
      />
    </section>
  );
}

type BudgetRecord = Pick<Budget, 'limit' | 'unit' | 'onExhausted'>;

function BudgetDiff({ before, after }: { before: BudgetRecord | null; after: BudgetRecord | null }) {
  const show = (b: BudgetRecord | null): string =>
    b === null ? 'none' : `${num(b.limit)} ${b.unit}, ${b.onExhausted}`;
  return (
    <span>
      {show(before)} → <strong>{show(after)}</strong>
    </span>
  );
}

function QuotaDiff({ before, after }: { before: QuotaUsage | null; after: QuotaUsage | null }) {
  const show = (q: QuotaUsage | null): string =>
    q === null
      ? 'none'
      : `nominal ${num(q.nominal)}, borrow ${limitText(q.borrowingLimit)}, lend ${limitText(q.lendingLimit)}`;
  return (
    <span>
      {show(before)} → <strong>{show(after)}</strong>
    </span>
  );
}

/** Millicores as cores, memory MiB as GiB: how an infra lead reads a node's size. */
const cores = (millis: number): string => `${num(millis / 1000)} cores`;
const gib = (mib: number): string => `${num(Math.round((mib / 1024) * 10) / 10)} GiB`;

function TeamCard({ team }: { team: Team }) {
  const q = team.quotas;
  return (
    <article class="panel" aria-labelledby={`team-${team.name}`} data-team={team.name}>
      <h2 id={`team-${team.name}`}>
        {team.name}{' '}
        <span class="muted small">
          {team.cohort ? `cohort ${team.cohort}` : 'no cohort'} · fair-share weight {team.fairShareWeight}
        </span>
      </h2>
      {q.length === 0 ? (
        <p class="muted">No quotas: this team's jobs cannot be admitted until it has one.</p>
      ) : (
        <>
          <ChartView
            kind="bar"
            summary={q
              .map(
                (u) =>
                  `${u.flavor}: ${u.used} used of ${u.nominal} nominal, ${u.borrowed} borrowed, ${u.lent} lent, ${u.pendingDemand} pending demand`,
              )
              .join('; ')}
            labels={q.map((u) => u.flavor)}
            series={[
              { label: 'nominal', data: q.map((u) => u.nominal), color: COLORS.grey },
              { label: 'used', data: q.map((u) => u.used), color: COLORS.blue },
              { label: 'borrowed', data: q.map((u) => u.borrowed), color: COLORS.orange },
              { label: 'lent', data: q.map((u) => u.lent), color: COLORS.green },
              { label: 'pending demand', data: q.map((u) => u.pendingDemand), color: COLORS.purple },
            ]}
            xTitle="flavor"
            yTitle="accelerators"
            height={220}
          />
          <div class="scroll">
            <table class="data">
              <caption class="sr-only">Quotas and usage of team {team.name}</caption>
              <thead>
                <tr>
                  <th scope="col">flavor</th>
                  <th scope="col" class="num">
                    used
                  </th>
                  <th scope="col" class="num">
                    nominal
                  </th>
                  <th scope="col" class="num">
                    borrowed
                  </th>
                  <th scope="col" class="num">
                    lent
                  </th>
                  <th scope="col" class="num">
                    pending demand
                  </th>
                  <th scope="col" class="num">
                    borrowing limit
                  </th>
                  <th scope="col" class="num">
                    lending limit
                  </th>
                  <th scope="col" class="num">
                    CPU used / limit
                  </th>
                  <th scope="col" class="num">
                    memory used / limit
                  </th>
                </tr>
              </thead>
              <tbody>
                {q.map((u) => (
                  <tr key={u.flavor}>
                    <th scope="row">{u.flavor}</th>
                    <td class="num">{num(u.used)}</td>
                    <td class="num">{num(u.nominal)}</td>
                    <td class="num">{num(u.borrowed)}</td>
                    <td class="num">{num(u.lent)}</td>
                    <td class="num">{num(u.pendingDemand)}</td>
                    <td class="num">{limitText(u.borrowingLimit)}</td>
                    <td class="num">{limitText(u.lendingLimit)}</td>
                    <td class="num">
                      {cores(u.cpuMillisUsed)} / {u.cpuMillisLimit == null ? 'no limit' : cores(u.cpuMillisLimit)}
                    </td>
                    <td class="num">
                      {gib(u.memoryMiBUsed)} / {u.memoryMiBLimit == null ? 'no limit' : gib(u.memoryMiBLimit)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </article>
  );
}

interface Draft {
  nominal: string;
  borrowingLimit: string;
  lendingLimit: string;
  cpuMillisLimit: string;
  memoryMiBLimit: string;
}

const limitDraft = (n: number | null | undefined): string => (n == null ? '' : String(n));
const draftOf = (q: QuotaUsage | undefined): Draft => ({
  nominal: q ? String(q.nominal) : '',
  borrowingLimit: limitDraft(q?.borrowingLimit),
  lendingLimit: limitDraft(q?.lendingLimit),
  cpuMillisLimit: limitDraft(q?.cpuMillisLimit),
  memoryMiBLimit: limitDraft(q?.memoryMiBLimit),
});

/** Admins: set one team's quota of one flavor (PUT /v1/teams/{team}/quotas/{flavor}); the change is audited. */
function QuotaEditor({ teams, flavors, onSaved }: { teams: Team[]; flavors: Flavor[]; onSaved: () => void }) {
  const [team, setTeam] = useState(teams[0]?.name ?? '');
  const [flavor, setFlavor] = useState(flavors[0]?.name ?? '');
  const current = (t: string, f: string): QuotaUsage | undefined =>
    teams.find((x) => x.name === t)?.quotas.find((q) => q.flavor === f);
  const [draft, setDraft] = useState<Draft>(() => draftOf(current(team, flavor)));
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [failure, setFailure] = useState<ApiError | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const choose = (t: string, f: string): void => {
    setTeam(t);
    setFlavor(f);
    setDraft(draftOf(current(t, f)));
    setErrors([]);
    setSaved(null);
  };
  const toNumber = (s: string): number | null | string =>
    s.trim() === '' ? null : /^-?\d+$/.test(s.trim()) ? Number(s.trim()) : s;
  const save = async (e: Event): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setErrors([]);
    setFailure(null);
    setSaved(null);
    const nominal = toNumber(draft.nominal);
    const body = {
      nominal: nominal ?? undefined,
      borrowingLimit: toNumber(draft.borrowingLimit),
      lendingLimit: toNumber(draft.lendingLimit),
      // Sent as they stand: a PUT replaces the whole quota, and a cap left out would be lifted.
      cpuMillisLimit: toNumber(draft.cpuMillisLimit),
      memoryMiBLimit: toNumber(draft.memoryMiBLimit),
    };
    try {
      await api(`/v1/teams/${encodeURIComponent(team)}/quotas/${encodeURIComponent(flavor)}`, {
        method: 'PUT',
        body,
      });
      setSaved(
        `Saved: ${team} on ${flavor} now has nominal ${draft.nominal}, borrowing ${draft.borrowingLimit || 'no limit'}, lending ${draft.lendingLimit || 'no limit'}.`,
      );
      onSaved();
    } catch (err) {
      if (err instanceof ApiError && err.errors.length > 0) setErrors(err.errors);
      else setFailure(err instanceof ApiError ? err : new ApiError(0, 'CLIENT', String(err)));
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (field: string): string | undefined => errors.find((x) => x.field === field)?.message;
  const input = (field: keyof Draft, label: string, help: string) => (
    <div class="field">
      <label for={`q-${field}`}>{label}</label>
      <input
        id={`q-${field}`}
        name={field}
        inputMode="numeric"
        value={draft[field]}
        onInput={(e) => setDraft({ ...draft, [field]: e.currentTarget.value })}
        aria-invalid={fieldError(field) ? true : undefined}
        aria-describedby={`q-${field}-help${fieldError(field) ? ` q-${field}-error` : ''}`}
      />
      <span id={`q-${field}-help`} class="small muted">
        {help}
      </span>
      {fieldError(field) && (
        <span id={`q-${field}-error`} class="small field-error">
          {label} {fieldError(field)}
        </span>
      )}
    </div>
  );
  return (
    <article class="panel" aria-labelledby="quota-edit-title">
      <h2 id="quota-edit-title">Edit a quota</h2>
      <form class="quota-form" onSubmit={(e) => void save(e)} noValidate>
        <div class="field">
          <label for="q-team">Team</label>
          <select id="q-team" value={team} onChange={(e) => choose(e.currentTarget.value, flavor)}>
            {teams.map((t) => (
              <option key={t.name} value={t.name}>
                {t.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="q-flavor">Flavor</label>
          <select id="q-flavor" value={flavor} onChange={(e) => choose(team, e.currentTarget.value)}>
            {flavors.map((f) => (
              <option key={f.name} value={f.name}>
                {f.name}
              </option>
            ))}
          </select>
        </div>
        {input('nominal', 'Nominal', 'accelerators guaranteed')}
        {input('borrowingLimit', 'Borrowing limit', 'accelerators; empty = no limit')}
        {input('lendingLimit', 'Lending limit', 'accelerators; empty = no limit')}
        {input('cpuMillisLimit', 'CPU limit', "millicores its replicas may hold on the flavor's nodes; empty = no limit")}
        {input('memoryMiBLimit', 'Memory limit', "MiB its replicas may hold on the flavor's nodes; empty = no limit")}
        <div class="field actions">
          <button type="submit" disabled={busy || team === '' || flavor === ''}>
            {busy ? 'Saving…' : 'Save quota'}
          </button>
        </div>
      </form>
      {errors.length > 0 && (
        <p class="note error" role="alert">
          The quota was not saved: {errors.map((x) => `${x.field} ${x.message}`).join('; ')}.
        </p>
      )}
      {failure && <ErrorNote error={failure} />}
      {saved && (
        <p class="note ok" role="status">
          {saved}
        </p>
      )}
    </article>
  );
}
