import type { CycleReport } from '#scheduling';

/** What POST /v1/scheduler/cycles needs: one cycle now (ManualCycle of #scheduling implements it). */
export interface CycleRunnerPort {
  run(): Promise<CycleReport>;
  close?(): Promise<void>;
}
