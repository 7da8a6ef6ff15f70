import { ApiProperty } from '@nestjs/swagger';
import type { PriorityClassRecord } from '#db';
import { TimeProperty } from '../response.doc.js';

export class PriorityClassView {
  @ApiProperty({ example: 'high' })
  name!: string;
  @ApiProperty({ example: 1000 })
  value!: number;
  @ApiProperty({ example: 'deadline-bound training' })
  description!: string;
  @ApiProperty({ description: 'Given to jobs that name no class.' })
  default!: boolean;
  @TimeProperty()
  createdAt!: string;
  @TimeProperty()
  updatedAt!: string;
}

export class PriorityClassListView {
  @ApiProperty({ type: [PriorityClassView], description: 'Highest value first.' })
  items!: PriorityClassView[];
}

export const priorityClassView = (c: PriorityClassRecord): PriorityClassView => ({
  name: c.name,
  value: c.value,
  description: c.description,
  default: c.isDefault,
  createdAt: c.createdAt.toISOString(),
  updatedAt: c.updatedAt.toISOString(),
});
