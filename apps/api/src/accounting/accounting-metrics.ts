import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Counter, Gauge, register } from 'prom-client';
import { BudgetRepository, UsageLedgerRepository, type BudgetStatus } from '#db';

/** A scrape reads the ledger at most this often per process (several scrapers, or a burst of them). */
const CACHE_MS = 5000;

interface Source {
  totals(): Promise<{ team: string; flavor: string; acceleratorSeconds: number }[]>;
  budgets(): Promise<BudgetStatus[]>;
}

/** The API app whose database the metrics read (the latest started; tests start several in one process). */
let source: Source | undefined;

function cached<T>(load: () => Promise<T>): () => Promise<T> {
  let at = 0;
  let value: Promise<T> | undefined;
  return () => {
    const now = Date.now();
    if (value === undefined || now - at >= CACHE_MS) {
      at = now;
      value = load();
      value.catch(() => (value = undefined));
    }
    return value;
  };
}

function registerOnce(): void {
  if (register.getSingleMetric('qm_accelerator_seconds_total')) return;
  new Counter({
    name: 'qm_accelerator_seconds_total',
    help: 'Accelerator-seconds held by jobs, per team and flavor, from the usage ledger (holdings still open count up to now)',
    labelNames: ['team', 'flavor'],
    async collect() {
      if (source === undefined) return;
      const totals = await source.totals();
      this.reset();
      for (const t of totals) this.inc({ team: t.team, flavor: t.flavor }, t.acceleratorSeconds);
    },
  });
  new Gauge({
    name: 'qm_budget_used_ratio',
    help: 'Share of each team budget used in its current period (1 = exhausted)',
    labelNames: ['team', 'period', 'unit', 'on_exhausted'],
    async collect() {
      if (source === undefined) return;
      this.reset();
      for (const b of await source.budgets()) this.set({ team: b.team, period: b.period, unit: b.unit, on_exhausted: b.onExhausted }, Number.isFinite(b.ratio) ? b.ratio : 1);
    },
  });
  new Gauge({
    name: 'qm_budget_threshold_reached',
    help: '1 when a team budget reached the threshold (0.8 warning, 1 exhausted) in its current period',
    labelNames: ['team', 'period', 'threshold'],
    async collect() {
      if (source === undefined) return;
      this.reset();
      for (const b of await source.budgets()) {
        this.set({ team: b.team, period: b.period, threshold: '0.8' }, b.ratio >= 0.8 || b.state === 'exhausted' ? 1 : 0);
        this.set({ team: b.team, period: b.period, threshold: '1' }, b.state === 'exhausted' ? 1 : 0);
      }
    },
  });
}

/** qm_accelerator_seconds_total{team,flavor} and the budget gauges on the API's /metrics. */
@Injectable()
export class AccountingMetrics implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly mine: Source;

  constructor(
    @Inject(UsageLedgerRepository) ledger: UsageLedgerRepository,
    @Inject(BudgetRepository) budgets: BudgetRepository,
  ) {
    this.mine = { totals: cached(() => ledger.totals(new Date())), budgets: cached(() => budgets.statuses(new Date())) };
  }

  onApplicationBootstrap(): void {
    registerOnce();
    source = this.mine;
  }

  onApplicationShutdown(): void {
    if (source === this.mine) source = undefined;
  }
}
