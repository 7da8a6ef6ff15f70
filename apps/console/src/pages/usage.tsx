import type { Identity } from '../session';

/**
 * Accelerator-hours and cost per team over time. Waits for GET /v1/usage (being built by the CLI/accounting
 * work); until it is on main this page says so rather than showing made-up figures.
 */
export function UsagePage({ identity: _identity }: { identity: Identity }) {
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title" tabIndex={-1}>
        Usage
      </h1>
      <div class="note warn" role="status" id="usage-waiting">
        <p>
          <strong>Waiting for accounting.</strong> This page will chart accelerator-hours and cost per team
          over time, with a CSV download, once the API serves <code>GET /v1/usage</code>. That endpoint is not
          in this version of Quartermaster yet.
        </p>
        <p>Meanwhile, live usage against quotas is on the Teams page.</p>
      </div>
    </section>
  );
}
