/**
 * Units of the quantities the core schedules: accelerators, CPU millicores and memory MiB. Each is a number
 * at run time (no wrapper, no cost) with a compile-time unit that keeps them apart: an accelerator count
 * never flows into a CPU or memory place (a field, a parameter, a helper's other operand) without the
 * compiler refusing it. Plain numbers — literals, parsed input, database rows — are accepted as any unit,
 * so fixtures and adapters stay as they are; the unit sticks once a value is read from a typed place.
 * Arithmetic through the helpers in amount.ts keeps the unit; raw `+`/`*` gives a plain number.
 */
declare const unit: unique symbol;

export type Unit = 'accelerators' | 'cpu-millis' | 'memory-mib';

/** A number carrying unit U at compile time (optional brand: a plain number is any unit; another unit is not). */
export type Quantity<U extends Unit> = number & { readonly [unit]?: U };

/** Whole accelerators (GPUs, Trainium/Gaudi devices, TPU chips). */
export type Accelerators = Quantity<'accelerators'>;
/** CPU in millicores (1000 = one core), as Kubernetes requests it. */
export type CpuMillis = Quantity<'cpu-millis'>;
/** Memory in MiB. */
export type MemoryMiB = Quantity<'memory-mib'>;

/** What one pod (a replica) asks for, or what a node offers: one amount of each unit. */
export interface Resources {
  accelerators: Accelerators;
  cpuMillis: CpuMillis;
  memoryMiB: MemoryMiB;
}

/** The same per replica, in the short form the placement loops use. */
export interface ReplicaShape {
  a: Accelerators;
  c: CpuMillis;
  m: MemoryMiB;
}
