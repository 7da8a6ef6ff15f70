// Accounting: the usage ledger, price history and budgets (libs/db/README.md, "Usage ledger").
export * from './periods.js';
export * from './usage-ledger.js';
export * from './budgets.js';
export * from './budget.repository.js';
export * from './usage-ledger.repository.js';
