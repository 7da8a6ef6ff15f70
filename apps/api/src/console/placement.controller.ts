import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { forbidden, notFound } from '#common';
import { FleetRepository, JobRepository } from '#db';
import { Caller } from '../auth/auth.decorators.js';
import { canActForTeam, type Principal } from '../auth/principal.js';
import { ApiProblems } from '../problem.doc.js';
import { Answers } from '../response.doc.js';
import { PlacementView } from './console.view.js';

@ApiTags('console')
@ApiBearerAuth()
@ApiProblems()
@Controller('v1/jobs')
export class PlacementController {
  constructor(
    @Inject(JobRepository) private readonly jobs: JobRepository,
    @Inject(FleetRepository) private readonly fleet: FleetRepository,
  ) {}

  /** Where each replica runs: node and the node's topology (zone, block, domain, TPU shape). Empty unless the job holds an allocation. */
  @Get(':id/placement')
  @Answers(PlacementView)
  async placement(@Param('id') id: string, @Caller() caller: Principal): Promise<PlacementView> {
    const job = await this.jobs.get(id);
    if (!job) throw notFound(`job ${id}`);
    if (!canActForTeam(caller, job.team))
      throw forbidden(`job ${id} belongs to team ${job.team}, which ${caller.subject} may not act for`);
    const nodes = new Map(
      (await this.fleet.nodes([...new Set(job.allocation.map((a) => a.node))])).map((n) => [n.name, n]),
    );
    return {
      flavor: job.flavor,
      items: job.allocation.map((a) => {
        const n = nodes.get(a.node);
        return {
          replica: a.replica,
          node: a.node,
          accelerators: a.accelerators,
          zone: n?.zone ?? null,
          block: n?.block ?? null,
          domain: n?.domain ?? null,
          tpuShape: n?.tpuShape ?? null,
        };
      }),
    };
  }
}
