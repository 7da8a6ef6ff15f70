import { type DynamicModule, Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { OPS_ACCESS, PROBES, PROCESS_STATUS, type OpsAccess, type ProcessStatus, type Probes } from './process-status.js';

/** The HTTP face of a scheduler or worker process: /healthz, /readyz, /metrics. */
@Module({})
export class SchedulerAppModule {
  static forRoot(status: ProcessStatus, probes: Probes, access: OpsAccess): DynamicModule {
    return {
      module: SchedulerAppModule,
      controllers: [HealthController],
      providers: [
        { provide: PROCESS_STATUS, useValue: status },
        { provide: PROBES, useValue: probes },
        { provide: OPS_ACCESS, useValue: access },
      ],
    };
  }
}
