import { ApiProperty } from '@nestjs/swagger';
import type { TeamFlavorUsage } from '#core';
import type { CohortRecord } from '#db';
import { TimeProperty } from '../response.doc.js';

/** A cohort's figures for one flavor, summed over its member teams. */
export class CohortFlavorView {
  @ApiProperty({ example: 'h100-80gb' })
  flavor!: string;
  @ApiProperty({ description: 'Σ members\' nominal quota.' })
  capacity!: number;
  @ApiProperty()
  used!: number;
  @ApiProperty()
  borrowed!: number;
  @ApiProperty()
  lent!: number;
  @ApiProperty()
  pendingDemand!: number;
}

export class CohortView {
  @ApiProperty({ example: 'research' })
  name!: string;
  @ApiProperty({ example: 'research teams that lend each other idle H100s' })
  description!: string;
  @ApiProperty({ type: [String], example: ['nlp', 'vision'] })
  members!: string[];
  @ApiProperty({ type: [CohortFlavorView] })
  flavors!: CohortFlavorView[];
  @TimeProperty()
  createdAt!: string;
  @TimeProperty()
  updatedAt!: string;
}

export class CohortListView {
  @ApiProperty({ type: [CohortView] })
  items!: CohortView[];
}

/** Per flavor: capacity = Σ members' nominal quota; used/borrowed/lent/pendingDemand summed over members. */
export function cohortView(c: CohortRecord, usage: ReadonlyMap<string, readonly TeamFlavorUsage[]>): CohortView {
  const perFlavor = new Map<string, CohortFlavorView>();
  for (const team of c.members) {
    for (const u of usage.get(team) ?? []) {
      const f = perFlavor.get(u.flavor) ?? { flavor: u.flavor, capacity: 0, used: 0, borrowed: 0, lent: 0, pendingDemand: 0 };
      f.capacity += u.nominal;
      f.used += u.used;
      f.borrowed += u.borrowed;
      f.lent += u.lent;
      f.pendingDemand += u.pendingDemand;
      perFlavor.set(u.flavor, f);
    }
  }
  return {
    name: c.name,
    description: c.description,
    members: c.members,
    flavors: [...perFlavor.values()].sort((a, b) => (a.flavor < b.flavor ? -1 : 1)),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}
