import { useState } from 'preact/hooks';
import { api, withQuery } from '../api';
import { ChartView } from '../components/chart';
import { Freshness, Loaded } from '../components/status';
import { COLORS, duration, num } from '../format';
import { usePoll } from '../poll';
import type { Identity } from '../session';
import type { FleetHistory, FleetHistoryPoint } from '../types';

/** The windows offered, each at the grain the scheduler keeps for it (GET /v1/fleet/history). */
const WINDOWS = {
  '2h': { label: 'Last 2 hours, by minute', resolution: 'minute', ms: 2 * 3_600_000 },
  '7d': { label: 'Last 7 days, by hour', resolution: 'hour', ms: 7 * 86_400_000 },
  '90d': { label: 'Last 90 days, by day', resolution: 'day', ms: 90 * 86_400_000 },
} as const;
type Window = keyof typeof WINDOWS;

const figure = (n: number): string => num(Math.round(n * 10) / 10);
const wait = (s: number | null): string => (s === null ? '—' : s < 60 ? `${Math.round(s)} s` : duration(s * 1000));
const share = (p: FleetHistoryPoint): string => (p.capacity > 0 ? `${Math.round((p.allocated / p.capacity) * 100)}%` : '—');

/** A row's time label: HH:MM for minutes and hours (with the day for hours), the date for days (UTC). */
function stamp(iso: string, resolution: string): string {
  return resolution === 'day' ? iso.slice(0, 10) : resolution === 'hour' ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
}

/** Newest time first; within a time by flavor, the flavor's own row before its teams. */
const newestFirst = (items: FleetHistoryPoint[]): FleetHistoryPoint[] =>
  [...items].sort((a, b) => (a.at !== b.at ? (a.at < b.at ? 1 : -1) : a.flavor !== b.flavor ? (a.flavor < b.flavor ? -1 : 1) : (a.team ?? '') < (b.team ?? '') ? -1 : 1));

/** The fleet over time: what each flavor offered, held and was asked, and how long jobs waited; the same figures as a table. */
export function HistoryPage({ identity }: { identity: Identity }) {
  const [range, setRange] = useState<Window>('2h');
  const [flavor, setFlavor] = useState('');
  const w = WINDOWS[range];
  const history = usePoll(
    () => api<FleetHistory>(withQuery('/v1/fleet/history', { resolution: w.resolution, from: new Date(Date.now() - w.ms).toISOString() })),
    `fleet-history:${range}`,
    60_000,
  );
  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title" tabIndex={-1}>
        History
      </h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="History window">
        <label>
          Window{' '}
          <select value={range} onChange={(e) => setRange(e.currentTarget.value as Window)}>
            {(Object.keys(WINDOWS) as Window[]).map((k) => (
              <option key={k} value={k}>
                {WINDOWS[k].label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Flavor{' '}
          <select value={flavor} onChange={(e) => setFlavor(e.currentTarget.value)}>
            <option value="">Every flavor</option>
            {[...new Set(history.data?.items.map((i) => i.flavor) ?? [])].map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </label>
      </form>
      <p class="muted small">
        Recorded by the scheduler once a minute (times in UTC). Offered: a flavor’s schedulable accelerators, or a
        team’s nominal quota; held: by admitted and running jobs; asked: by waiting jobs, on their first choice of
        flavor. Hours and days average their minutes and keep the longest waits.
        {identity.role === 'admin' ? '' : ' You see every flavor and your own teams.'}
      </p>
      <Freshness polled={history} every="60 s" />
      <Loaded polled={history}>
        {(h) => {
          const items = h.items.filter((i) => flavor === '' || i.flavor === flavor);
          if (items.length === 0) return <p class="muted">Nothing recorded in this window yet.</p>;
          const flavors = [...new Set(items.map((i) => i.flavor))];
          const times = [...new Set(items.map((i) => i.at))];
          const labels = times.map((t) => stamp(t, h.resolution));
          const whole = (f: string, pick: (p: FleetHistoryPoint) => number): number[] =>
            times.map((t) => {
              const p = items.find((i) => i.at === t && i.flavor === f && i.team === null);
              return p === undefined ? 0 : pick(p);
            });
          return (
            <>
              <div class="grid2">
                {flavors.map((f) => (
                  <article class="panel" key={f}>
                    <h2>{f}: offered, held and asked</h2>
                    <ChartView
                      kind="line"
                      summary={`${f}: held ${figure(whole(f, (p) => p.allocated).at(-1) ?? 0)} of ${figure(whole(f, (p) => p.capacity).at(-1) ?? 0)} accelerators at the end of the window, ${figure(whole(f, (p) => p.pendingAccelerators).at(-1) ?? 0)} asked by waiting jobs`}
                      labels={labels}
                      series={[
                        { label: 'offered', color: COLORS.grey, data: whole(f, (p) => p.capacity) },
                        { label: 'held', color: COLORS.blue, data: whole(f, (p) => p.allocated) },
                        { label: 'asked by waiting jobs', color: COLORS.orange, data: whole(f, (p) => p.pendingAccelerators) },
                      ]}
                      xTitle={`${h.resolution} (UTC)`}
                      yTitle="accelerators"
                      integer={false}
                    />
                  </article>
                ))}
              </div>
              <article class="panel">
                <h2>The same figures</h2>
                <div class="scroll">
                  <table class="data" id="history-table">
                    <caption class="sr-only">Fleet history per {h.resolution}, flavor and team</caption>
                    <thead>
                      <tr>
                        <th scope="col">time (UTC)</th>
                        <th scope="col">flavor</th>
                        <th scope="col">team</th>
                        <th scope="col" class="num">offered</th>
                        <th scope="col" class="num">held</th>
                        <th scope="col" class="num">held %</th>
                        <th scope="col" class="num">waiting jobs</th>
                        <th scope="col" class="num">asked</th>
                        <th scope="col" class="num">wait p90</th>
                        <th scope="col" class="num">longest wait</th>
                      </tr>
                    </thead>
                    <tbody>
                      {newestFirst(items).map((p) => (
                        <tr key={`${p.at}/${p.flavor}/${p.team ?? ''}`} data-team={p.team ?? ''}>
                          <th scope="row">{stamp(p.at, h.resolution)}</th>
                          <td>{p.flavor}</td>
                          <td>{p.team ?? 'all teams'}</td>
                          <td class="num">{figure(p.capacity)}</td>
                          <td class="num">{figure(p.allocated)}</td>
                          <td class="num">{share(p)}</td>
                          <td class="num">{figure(p.pendingJobs)}</td>
                          <td class="num">{figure(p.pendingAccelerators)}</td>
                          <td class="num">{wait(p.waitP90Seconds)}</td>
                          <td class="num">{wait(p.waitMaxSeconds)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </article>
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
