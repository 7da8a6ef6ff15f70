import { api } from '../api';
import { Freshness, Loaded } from '../components/status';
import { num } from '../format';
import { usePoll } from '../poll';
import type { FleetNode, Page } from '../types';

/** Cell colour by the share of a node's accelerators in use: white (idle) → dark blue (full). */
const SCALE = ['#f4f7fb', '#d3e3f3', '#a9c9e8', '#6fa3d6', '#3a7cc0', '#1b4f8a'];
const shade = (used: number, total: number): string =>
  total === 0
    ? SCALE[0]!
    : SCALE[Math.min(SCALE.length - 1, Math.ceil((used / total) * (SCALE.length - 1)))]!;

interface Group {
  key: string;
  nodes: FleetNode[];
}

const domainOf = (n: FleetNode): string =>
  [
    n.topology.zone && `zone ${n.topology.zone}`,
    n.topology.block && `block ${n.topology.block}`,
    n.topology.domain && `domain ${n.topology.domain}`,
  ]
    .filter(Boolean)
    .join(' › ') || 'no topology labels';

/** Allocation per node, by flavor and topology domain: a heat map where fragmentation shows at a glance. */
export function NodesPage() {
  const fleet = usePoll(() => api<Page<FleetNode>>('/v1/fleet/nodes'), 'fleet');
  return (
    <section aria-labelledby="nodes-title">
      <h1 id="nodes-title" tabIndex={-1}>
        Nodes
      </h1>
      <Freshness polled={fleet} every="10 s" />
      <Legend />
      <Loaded polled={fleet}>
        {(f) => {
          if (f.items.length === 0)
            return (
              <p class="muted">
                No nodes yet (with Kubernetes they are synced from the API server; otherwise PUT /v1/nodes/…).
              </p>
            );
          const flavors = new Map<string, FleetNode[]>();
          for (const n of f.items) flavors.set(n.flavor, [...(flavors.get(n.flavor) ?? []), n]);
          return [...flavors.entries()].map(([flavor, nodes]) => (
            <FlavorHeatMap key={flavor} flavor={flavor} nodes={nodes} />
          ));
        }}
      </Loaded>
    </section>
  );
}

function Legend() {
  return (
    <div class="legend" aria-label="Legend">
      <span>in use:</span>
      {SCALE.map((c, i) => (
        <span
          key={c}
          class="swatch"
          style={{ background: c }}
          title={`${Math.round((i / (SCALE.length - 1)) * 100)}%`}
        />
      ))}
      <span class="small muted">0% → 100% of the node’s accelerators</span>
      <span class="cell cordoned legend-cell" aria-hidden="true" />{' '}
      <span class="small">cordoned / not ready (receives no new work)</span>
    </div>
  );
}

function FlavorHeatMap({ flavor, nodes }: { flavor: string; nodes: FleetNode[] }) {
  const groups: Group[] = [];
  for (const n of nodes) {
    const key = domainOf(n);
    const g = groups.find((x) => x.key === key);
    if (g) g.nodes.push(n);
    else groups.push({ key, nodes: [n] });
  }
  const total = nodes.reduce((s, n) => s + n.accelerators, 0);
  const used = nodes.reduce((s, n) => s + n.allocated + n.external, 0);
  const usable = nodes.filter((n) => n.schedulable);
  const free = usable.reduce((s, n) => s + n.free, 0);
  const wholeFree = usable.filter((n) => n.free === n.accelerators && n.accelerators > 0);
  const stranded = usable.filter((n) => n.free > 0 && n.free < n.accelerators);
  const largest = usable.reduce((m, n) => Math.max(m, n.free), 0);
  const cordoned = nodes.filter((n) => !n.schedulable);
  const labelled = nodes.length <= 400;
  return (
    <article class="panel" aria-labelledby={`flavor-${flavor}`} data-flavor={flavor}>
      <h2 id={`flavor-${flavor}`}>{flavor}</h2>
      <p class="small">
        {num(nodes.length)} node{nodes.length === 1 ? '' : 's'}, {num(used)} of {num(total)} accelerators in
        use. <strong>{num(free)} free</strong> on schedulable nodes:{' '}
        {num(wholeFree.reduce((s, n) => s + n.free, 0))} on {num(wholeFree.length)} idle node
        {wholeFree.length === 1 ? '' : 's'}, {num(stranded.reduce((s, n) => s + n.free, 0))} scattered over{' '}
        {num(stranded.length)} partly used nodes. Largest free on one node: {num(largest)}.
        {cordoned.length > 0 && (
          <>
            {' '}
            {num(cordoned.length)} node{cordoned.length === 1 ? '' : 's'} cordoned or not ready.
          </>
        )}
      </p>
      {groups.map((g) => (
        <figure class="heat" key={g.key}>
          <figcaption>
            {g.key}{' '}
            <span class="muted small">
              · {g.nodes.length} node{g.nodes.length === 1 ? '' : 's'},{' '}
              {num(g.nodes.reduce((s, n) => s + (n.schedulable ? n.free : 0), 0))} free
            </span>
          </figcaption>
          <div class="cells" role="list">
            {g.nodes.map((n) => {
              const inUse = n.allocated + n.external;
              const label = `${n.name}: ${inUse} of ${n.accelerators} in use${n.external ? ` (${n.external} by other schedulers)` : ''}, ${n.free} free${n.jobs ? `, ${n.jobs} job${n.jobs === 1 ? '' : 's'}` : ''}${n.schedulable ? '' : ', cordoned or not ready'}`;
              return (
                <div
                  key={n.name}
                  role="listitem"
                  class={`cell${n.schedulable ? '' : ' cordoned'}${labelled ? '' : ' tiny'}`}
                  style={
                    n.schedulable
                      ? {
                          background: shade(inUse, n.accelerators),
                          color: inUse / Math.max(1, n.accelerators) > 0.5 ? '#fff' : '#1d1f23',
                        }
                      : undefined
                  }
                  title={label}
                  aria-label={label}
                  data-node={n.name}
                >
                  {labelled && (
                    <>
                      <span class="cell-name">{n.name}</span>
                      <span class="cell-value">
                        {inUse}/{n.accelerators}
                      </span>
                    </>
                  )}
                </div>
              );
            })}
          </div>
        </figure>
      ))}
      <details>
        <summary>Nodes of {flavor} as a table</summary>
        <div class="scroll">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">node</th>
                <th scope="col">topology</th>
                <th scope="col" class="num">
                  accelerators
                </th>
                <th scope="col" class="num">
                  allocated
                </th>
                <th scope="col" class="num">
                  other schedulers
                </th>
                <th scope="col" class="num">
                  free
                </th>
                <th scope="col" class="num">
                  jobs
                </th>
                <th scope="col">schedulable</th>
              </tr>
            </thead>
            <tbody>
              {nodes.map((n) => (
                <tr key={n.name}>
                  <th scope="row">{n.name}</th>
                  <td>{domainOf(n)}</td>
                  <td class="num">{n.accelerators}</td>
                  <td class="num">{n.allocated}</td>
                  <td class="num">{n.external}</td>
                  <td class="num">{n.free}</td>
                  <td class="num">{n.jobs}</td>
                  <td>{n.schedulable ? 'yes' : 'no (cordoned / not ready)'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </article>
  );
}
