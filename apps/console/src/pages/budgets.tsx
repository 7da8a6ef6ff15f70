import { useState } from 'preact/hooks';
import { api, ApiError, type FieldError } from '../api';
import { ErrorNote, Loaded } from '../components/status';
import { money, num, when } from '../format';
import type { Polled } from '../poll';
import type { Identity } from '../session';
import type { Budget, Team } from '../types';

const PERIODS = ['day', 'week', 'month'] as const;
const amount = (b: Pick<Budget, 'unit'>, n: number): string =>
  b.unit === 'currency'
    ? money(n)
    : `${n < 10 ? (Math.round(n * 100) / 100).toFixed(2) : num(Math.round(n * 10) / 10)} accelerator-hours`;

/** Team budgets with their use this period (GET /v1/budgets); admins set them (PUT /v1/teams/{team}/budgets/{period}). */
export function BudgetsPanel({
  identity,
  budgets,
  teams,
  onSaved,
}: {
  identity: Identity;
  budgets: Polled<{ items: Budget[] }>;
  teams: Team[];
  onSaved: () => void;
}) {
  return (
    <article class="panel" aria-labelledby="budgets-title">
      <h2 id="budgets-title">Budgets</h2>
      <Loaded polled={budgets}>
        {(b) =>
          b.items.length === 0 ? (
            <p class="muted">No budgets set{identity.role === 'admin' ? '' : ' for your teams'}.</p>
          ) : (
            <div class="scroll">
              <table class="data" id="budgets-table">
                <caption class="sr-only">Budgets and their use in the current period</caption>
                <thead>
                  <tr>
                    <th scope="col">team</th>
                    <th scope="col">period</th>
                    <th scope="col">used of limit</th>
                    <th scope="col">state</th>
                    <th scope="col">when used up</th>
                  </tr>
                </thead>
                <tbody>
                  {b.items.map((x) => (
                    <tr key={`${x.team}/${x.period}`} data-budget={`${x.team}/${x.period}`}>
                      <th scope="row">{x.team}</th>
                      <td>
                        {x.period}{' '}
                        <span class="muted small">
                          ({x.current.period}, until {when(x.current.periodEnd)})
                        </span>
                      </td>
                      <td>
                        <meter
                          min={0}
                          max={Math.max(x.limit, 1e-9)}
                          low={x.limit * 0.8}
                          high={x.limit}
                          optimum={0}
                          value={x.current.used}
                          aria-label={`${x.team} ${x.period} budget use`}
                        />{' '}
                        {amount(x, x.current.used)} of {amount(x, x.limit)}
                        {x.current.ratio !== null && (
                          <span class="muted small"> ({Math.round(x.current.ratio * 100)}%)</span>
                        )}
                        {x.current.overshoot > 0 && (
                          <span class="small overshoot"> — {amount(x, x.current.overshoot)} over the limit</span>
                        )}
                      </td>
                      <td>
                        <span class={`badge ${x.current.state === 'ok' ? 'ok' : 'bad'}`}>
                          {x.current.state}
                        </span>
                      </td>
                      <td data-running-jobs={x.whenExhausted.runningJobs}>
                        <strong>
                          {x.onExhausted}: running jobs {x.whenExhausted.runningJobs === 'stop' ? 'are stopped' : 'go on'}
                        </strong>
                        <br />
                        <span class="muted small">{x.whenExhausted.summary}</span>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
      {identity.role === 'admin' && teams.length > 0 && (
        <BudgetEditor teams={teams} budgets={budgets.data?.items ?? []} onSaved={onSaved} />
      )}
    </article>
  );
}

function BudgetEditor({
  teams,
  budgets,
  onSaved,
}: {
  teams: Team[];
  budgets: Budget[];
  onSaved: () => void;
}) {
  const [team, setTeam] = useState(teams[0]!.name);
  const [period, setPeriod] = useState<(typeof PERIODS)[number]>('month');
  const existing = (t: string, p: string): Budget | undefined =>
    budgets.find((b) => b.team === t && b.period === p);
  const [limit, setLimit] = useState(() => String(existing(team, period)?.limit ?? ''));
  const [unit, setUnit] = useState<Budget['unit']>(existing(team, period)?.unit ?? 'accelerator-hours');
  const [onExhausted, setOnExhausted] = useState<Budget['onExhausted']>(
    existing(team, period)?.onExhausted ?? 'warn',
  );
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [failure, setFailure] = useState<ApiError | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const choose = (t: string, p: (typeof PERIODS)[number]): void => {
    setTeam(t);
    setPeriod(p);
    const b = existing(t, p);
    setLimit(b ? String(b.limit) : '');
    setUnit(b?.unit ?? 'accelerator-hours');
    setOnExhausted(b?.onExhausted ?? 'warn');
    setErrors([]);
    setSaved(null);
  };
  const save = async (e: Event): Promise<void> => {
    e.preventDefault();
    setErrors([]);
    setFailure(null);
    setSaved(null);
    const n = limit.trim() === '' ? undefined : Number(limit.trim());
    try {
      await api(`/v1/teams/${encodeURIComponent(team)}/budgets/${period}`, {
        method: 'PUT',
        body: { limit: Number.isNaN(n) ? limit : n, unit, onExhausted },
      });
      setSaved(
        `Saved: ${team}'s ${period} budget is ${limit} ${unit === 'currency' ? '(currency)' : 'accelerator-hours'}, ${onExhausted} when used up.`,
      );
      onSaved();
    } catch (err) {
      if (err instanceof ApiError && err.errors.length > 0) setErrors(err.errors);
      else setFailure(err instanceof ApiError ? err : new ApiError(0, 'CLIENT', String(err)));
    }
  };
  return (
    <>
      <h3>Set a budget</h3>
      <form class="quota-form" onSubmit={(e) => void save(e)} noValidate>
        <div class="field">
          <label for="b-team">Team</label>
          <select id="b-team" value={team} onChange={(e) => choose(e.currentTarget.value, period)}>
            {teams.map((t) => (
              <option key={t.name} value={t.name}>
                {t.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="b-period">Period</label>
          <select
            id="b-period"
            value={period}
            onChange={(e) => choose(team, e.currentTarget.value as (typeof PERIODS)[number])}
          >
            {PERIODS.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="b-limit">Limit</label>
          <input
            id="b-limit"
            inputMode="decimal"
            value={limit}
            onInput={(e) => setLimit(e.currentTarget.value)}
            aria-invalid={errors.some((x) => x.field === 'limit') ? true : undefined}
          />
        </div>
        <div class="field">
          <label for="b-unit">Unit</label>
          <select id="b-unit" value={unit} onChange={(e) => setUnit(e.currentTarget.value as Budget['unit'])}>
            <option value="accelerator-hours">accelerator-hours</option>
            <option value="currency">currency (flavor prices)</option>
          </select>
        </div>
        <div class="field">
          <label for="b-action">When used up</label>
          <select
            id="b-action"
            value={onExhausted}
            onChange={(e) => setOnExhausted(e.currentTarget.value as Budget['onExhausted'])}
          >
            <option value="warn">warn (events only)</option>
            <option value="block">block new jobs (running jobs go on)</option>
            <option value="stop">stop: block new jobs and stop running ones</option>
          </select>
        </div>
        <div class="field actions">
          <button type="submit">Save budget</button>
        </div>
      </form>
      {errors.length > 0 && (
        <p class="note error" role="alert">
          The budget was not saved: {errors.map((x) => `${x.field} ${x.message}`).join('; ')}.
        </p>
      )}
      {failure && <ErrorNote error={failure} />}
      {saved && (
        <p class="note ok" role="status">
          {saved}
        </p>
      )}
    </>
  );
}
