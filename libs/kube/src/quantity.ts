/**
 * Kubernetes resource quantities (`500m`, `2`, `1.5Gi`, `128974848`, `129e6`, `123Mi`) parsed exactly,
 * as a rational number of base units, then converted to the integers Quartermaster counts in:
 * CPU millicores, memory MiB, and plain counts for extended resources (accelerators).
 *
 * Rounding is the caller's choice: node capacity rounds down (never promise what is not there),
 * pod requests round up (never under-count what a pod holds).
 */

export class QuantityError extends Error {
  constructor(
    readonly quantity: string,
    reason: string,
  ) {
    super(`invalid Kubernetes quantity ${JSON.stringify(quantity)}: ${reason}`);
    this.name = 'QuantityError';
  }
}

export type Rounding = 'floor' | 'ceil';

/** An exact non-negative rational: numerator / denominator (denominator > 0). */
export interface Rational {
  numerator: bigint;
  denominator: bigint;
}

const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
/** Decimal SI suffixes as a power of ten. */
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

const PATTERN = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/;

/** Parses a quantity into an exact rational number of base units (cores, bytes, devices). */
export function parseQuantity(input: string | number): Rational {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) throw new QuantityError(String(input), 'must be a finite number ≥ 0');
    return parseQuantity(String(input));
  }
  const text = input.trim();
  const match = PATTERN.exec(text);
  if (!match) throw new QuantityError(input, 'expected <number><suffix>, e.g. 500m, 2, 1.5Gi, 129e6');
  const [, sign, digits = '', suffix, exponent] = match;
  const [whole = '', fraction = ''] = digits.split('.');
  let numerator = BigInt((whole || '0') + fraction);
  let denominator = 10n ** BigInt(fraction.length);
  if (sign === '-' && numerator !== 0n) throw new QuantityError(input, 'must not be negative');
  if (suffix !== undefined && suffix in BINARY) {
    numerator *= BINARY[suffix]!;
  } else {
    const power = exponent !== undefined ? Number(exponent) : DECIMAL[suffix ?? '']!;
    if (Math.abs(power) > 100) throw new QuantityError(input, 'exponent out of range');
    if (power >= 0) numerator *= 10n ** BigInt(power);
    else denominator *= 10n ** BigInt(-power);
  }
  return { numerator, denominator };
}

function divide(value: Rational, unit: Rational, rounding: Rounding): number {
  const numerator = value.numerator * unit.denominator;
  const denominator = value.denominator * unit.numerator;
  let quotient = numerator / denominator;
  if (rounding === 'ceil' && quotient * denominator !== numerator) quotient += 1n;
  if (quotient > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new QuantityError(`${String(value.numerator)}/${String(value.denominator)}`, 'too large');
  }
  return Number(quotient);
}

/** CPU quantity (cores) → millicores. */
export function cpuMillis(quantity: string | number, rounding: Rounding): number {
  return divide(parseQuantity(quantity), { numerator: 1n, denominator: 1000n }, rounding);
}

/** Memory quantity (bytes) → MiB. */
export function memoryMiB(quantity: string | number, rounding: Rounding): number {
  return divide(parseQuantity(quantity), { numerator: 1n << 20n, denominator: 1n }, rounding);
}

/** Countable (extended) resource, e.g. `nvidia.com/gpu: "8"` → 8. */
export function count(quantity: string | number, rounding: Rounding): number {
  return divide(parseQuantity(quantity), { numerator: 1n, denominator: 1n }, rounding);
}
