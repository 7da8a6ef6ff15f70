// The fleet over time: minute samples rolled up into hours and days (fleet-history.ts).
export * from './fleet-history.js';
