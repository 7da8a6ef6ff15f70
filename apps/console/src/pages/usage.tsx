import { useState } from 'preact/hooks';
import { api, ApiError, withQuery } from '../api';
import { ChartView } from '../components/chart';
import { ErrorNote, Freshness, Loaded } from '../components/status';
import { COLORS, money, num } from '../format';
import { usePoll } from '../poll';
import { session, type Identity } from '../session';
import type { UsageReport } from '../types';

const PALETTE = [
  COLORS.blue,
  COLORS.orange,
  COLORS.green,
  COLORS.vermillion,
  COLORS.sky,
  COLORS.purple,
  COLORS.yellow,
  COLORS.black,
  COLORS.grey,
];
const DAY = 86_400_000;

/** The windows offered, as [from, to) in UTC days (what GET /v1/usage takes). */
const RANGES = {
  '7d': { label: 'Last 7 days', days: 7 },
  '30d': { label: 'Last 30 days', days: 30 },
  '90d': { label: 'Last 90 days', days: 90 },
} as const;
type Range = keyof typeof RANGES;

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

function usageWindow(range: Range, now = Date.now()): { from: string; to: string; days: string[] } {
  const today = Date.UTC(
    new Date(now).getUTCFullYear(),
    new Date(now).getUTCMonth(),
    new Date(now).getUTCDate(),
  );
  const start = today - (RANGES[range].days - 1) * DAY;
  const days: string[] = [];
  for (let d = start; d <= today; d += DAY) days.push(isoDay(d));
  return { from: isoDay(start), to: isoDay(today + DAY), days };
}

/** Hours with two decimals below 10 (a short test run is 0.04 h, not 0), one above. */
const hours = (n: number): string =>
  n < 10 ? (Math.round(n * 100) / 100).toFixed(2) : num(Math.round(n * 10) / 10);

/** Accelerator-hours and cost per team over time (GET /v1/usage), with the same figures as CSV. */
export function UsagePage({ identity }: { identity: Identity }) {
  const [range, setRange] = useState<Range>('30d');
  const [team, setTeam] = useState('');
  const w = usageWindow(range);
  const daily = usePoll(
    () => api<UsageReport>(withQuery('/v1/usage', { from: w.from, to: w.to, groupBy: 'team,day', team })),
    `usage:day:${range}:${team}`,
    60_000,
  );
  const byFlavor = usePoll(
    () => api<UsageReport>(withQuery('/v1/usage', { from: w.from, to: w.to, groupBy: 'team,flavor', team })),
    `usage:flavor:${range}:${team}`,
    60_000,
  );
  const teamChoices =
    identity.role === 'admin'
      ? [...new Set(byFlavor.data?.items.map((i) => i.team ?? '') ?? [])].filter(Boolean)
      : identity.teams;
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title" tabIndex={-1}>
        Usage
      </h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Usage window">
        <label>
          Window{' '}
          <select value={range} onChange={(e) => setRange(e.currentTarget.value as Range)}>
            {(Object.keys(RANGES) as Range[]).map((r) => (
              <option key={r} value={r}>
                {RANGES[r].label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Team{' '}
          <select value={team} onChange={(e) => setTeam(e.currentTarget.value)}>
            <option value="">{identity.role === 'admin' ? 'All teams' : 'All my teams'}</option>
            {teamChoices.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <CsvButton
          path={withQuery('/v1/usage', { from: w.from, to: w.to, groupBy: 'team,flavor,day', team })}
          name={`quartermaster-usage-${w.from}-to-${w.to}.csv`}
        />
      </form>
      <p class="muted small">
        UTC days {w.from} to {w.days.at(-1)}. Accelerator-hours count every accelerator a job held, from
        admission to release; cost uses each flavor’s price per accelerator-hour at the time.
      </p>
      <Freshness polled={daily} every="60 s" />
      <Loaded polled={daily}>
        {(r) => {
          const teams = [...new Set(r.items.map((i) => i.team ?? ''))].sort();
          const series = (pick: (i: UsageReport['items'][number]) => number) =>
            teams.map((t, n) => ({
              label: t,
              color: PALETTE[n % PALETTE.length]!,
              stack: 'teams',
              data: w.days.map((d) =>
                r.items.filter((i) => i.team === t && i.period === d).reduce((s, i) => s + pick(i), 0),
              ),
            }));
          const labels = w.days.map((d) => d.slice(5));
          return (
            <>
              <div class="cards" role="list" aria-label="Totals over the window">
                <div class="card stat" role="listitem">
                  <span class="value">{hours(r.total.acceleratorHours)}</span>
                  <span class="label">accelerator-hours</span>
                </div>
                <div class="card stat" role="listitem">
                  <span class="value">{money(r.total.cost)}</span>
                  <span class="label">cost</span>
                </div>
                <div class="card stat" role="listitem">
                  <span class="value">{hours(r.total.wastedAcceleratorHours)}</span>
                  <span class="label">accelerator-hours lost to preemption or failure</span>
                </div>
                <div class="card stat" role="listitem">
                  <span class="value">{num(r.total.jobsCompleted)}</span>
                  <span class="label">jobs completed</span>
                </div>
              </div>
              {teams.length === 0 ? (
                <p class="muted">No accelerator use in this window.</p>
              ) : (
                <div class="grid2">
                  <article class="panel">
                    <h2>Accelerator-hours per team and day</h2>
                    <ChartView
                      kind="bar"
                      stacked
                      summary={`Accelerator-hours per day, stacked by team: ${teams.map((t) => `${t} ${hours(r.items.filter((i) => i.team === t).reduce((s, i) => s + i.acceleratorHours, 0))}`).join(', ')}`}
                      labels={labels}
                      series={series((i) => i.acceleratorHours)}
                      xTitle="day (UTC, month-day)"
                      yTitle="accelerator-hours per day"
                      integer={false}
                    />
                  </article>
                  <article class="panel">
                    <h2>Cost per team and day</h2>
                    <ChartView
                      kind="bar"
                      stacked
                      summary={`Cost per day, stacked by team: ${teams.map((t) => `${t} ${money(r.items.filter((i) => i.team === t).reduce((s, i) => s + i.cost, 0))}`).join(', ')}`}
                      labels={labels}
                      series={series((i) => i.cost)}
                      xTitle="day (UTC, month-day)"
                      yTitle="cost per day (USD)"
                      integer={false}
                    />
                  </article>
                </div>
              )}
            </>
          );
        }}
      </Loaded>
      <article class="panel">
        <h2>Per team and flavor</h2>
        <Loaded polled={byFlavor}>
          {(r) =>
            r.items.length === 0 ? (
              <p class="muted">No accelerator use in this window.</p>
            ) : (
              <div class="scroll">
                <table class="data" id="usage-table">
                  <caption class="sr-only">Usage per team and flavor over the window</caption>
                  <thead>
                    <tr>
                      <th scope="col">team</th>
                      <th scope="col">flavor</th>
                      <th scope="col" class="num">
                        accelerator-hours
                      </th>
                      <th scope="col" class="num">
                        lost (preempted/failed)
                      </th>
                      <th scope="col" class="num">
                        cost
                      </th>
                      <th scope="col" class="num">
                        jobs completed
                      </th>
                      <th scope="col" class="num">
                        share of nominal quota
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {r.items.map((i) => (
                      <tr key={`${i.team}/${i.flavor}`}>
                        <th scope="row">{i.team}</th>
                        <td>{i.flavor}</td>
                        <td class="num">{hours(i.acceleratorHours)}</td>
                        <td class="num">{hours(i.wastedAcceleratorHours)}</td>
                        <td class="num">{money(i.cost)}</td>
                        <td class="num">{num(i.jobsCompleted)}</td>
                        <td class="num">
                          {i.nominalShare === null ? '—' : `${Math.round(i.nominalShare * 1000) / 10}%`}
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
    </section>
  );
}

/** Downloads the CSV with the session's token in the header (a plain link could not carry it). */
function CsvButton({ path, name }: { path: string; name: string }) {
  const [error, setError] = useState<ApiError | null>(null);
  const download = async (): Promise<void> => {
    setError(null);
    try {
      const res = await fetch(path, {
        headers: { accept: 'text/csv', authorization: `Bearer ${session.token() ?? ''}` },
      });
      if (!res.ok) {
        const p = (await res.json().catch(() => ({}))) as { code?: string; detail?: string };
        throw new ApiError(res.status, p.code ?? `HTTP_${res.status}`, p.detail ?? res.statusText);
      }
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'NETWORK', String(e)));
    }
  };
  return (
    <>
      <button type="button" onClick={() => void download()}>
        Download CSV (per team, flavor and day)
      </button>
      {error && <ErrorNote error={error} />}
    </>
  );
}
