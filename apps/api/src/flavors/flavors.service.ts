import { Inject, Injectable } from '@nestjs/common';
import { AppError, notFound } from '#common';
import { FlavorRepository } from '#db';
import type { Principal } from '../auth/principal.js';
import { DEFAULT_RESOURCE_NAME, type PutFlavorDto } from './flavor.dto.js';
import { flavorView, type FlavorView } from './flavor.view.js';

/** Flavors: create or replace (defaults filled in), read, delete unless something still uses one; every change audited. */
@Injectable()
export class FlavorsService {
  constructor(@Inject(FlavorRepository) private readonly flavors: FlavorRepository) {}

  async put(name: string, dto: PutFlavorDto, caller: Principal): Promise<{ created: boolean; flavor: FlavorView }> {
    const { record, created } = await this.flavors.upsert(name, {
      kind: dto.kind,
      resourceName: dto.resourceName ?? DEFAULT_RESOURCE_NAME[dto.kind],
      nodeLabels: dto.nodeLabels ?? {},
      topologyLabels: { ...(dto.topologyLabels ?? {}) },
      memoryGiB: dto.memoryGiB ?? null,
      relativeSpeed: dto.relativeSpeed ?? 1,
      costPerHour: dto.costPerHour ?? 0,
    }, caller.subject);
    return { created, flavor: flavorView(record) };
  }

  async list(): Promise<FlavorView[]> {
    return (await this.flavors.list()).map(flavorView);
  }

  async get(name: string): Promise<FlavorView> {
    const flavor = await this.flavors.get(name);
    if (!flavor) throw notFound(`flavor ${name}`);
    return flavorView(flavor);
  }

  /** 409 FLAVOR_IN_USE while nodes, quotas or unfinished jobs refer to it. */
  async delete(name: string, caller: Principal): Promise<void> {
    const outcome = await this.flavors.deleteIfUnused(name, caller.subject);
    if (outcome === 'missing') throw notFound(`flavor ${name}`);
    if (outcome === 'in-use') {
      const use = await this.flavors.use(name);
      throw new AppError(
        'FLAVOR_IN_USE',
        `flavor ${name} is in use by ${use.nodes} node(s), ${use.quotas} quota(s) and ${use.activeJobs} unfinished job(s); remove those first`,
      );
    }
  }
}
