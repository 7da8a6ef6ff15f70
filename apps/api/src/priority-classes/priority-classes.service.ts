import { Inject, Injectable } from '@nestjs/common';
import { AppError, notFound } from '#common';
import { PriorityClassRepository } from '#db';
import type { Principal } from '../auth/principal.js';
import { PriorityChoiceCache } from '../jobs/priority-choices.js';
import type { PutPriorityClassDto } from './priority-class.dto.js';
import { priorityClassView, type PriorityClassView } from './priority-class.view.js';

/** Priority classes: defined by admins, read by every token, chosen by members when they submit. */
@Injectable()
export class PriorityClassesService {
  constructor(
    @Inject(PriorityClassRepository) private readonly classes: PriorityClassRepository,
    @Inject(PriorityChoiceCache) private readonly choices: PriorityChoiceCache,
  ) {}

  async put(name: string, dto: PutPriorityClassDto, caller: Principal): Promise<{ created: boolean; priorityClass: PriorityClassView }> {
    const { record, created } = await this.classes.upsert(name, { value: dto.value, description: dto.description ?? '', isDefault: dto.default ?? false }, caller.subject);
    this.choices.invalidate();
    return { created, priorityClass: priorityClassView(record) };
  }

  async list(): Promise<PriorityClassView[]> {
    return (await this.classes.list()).map(priorityClassView);
  }

  async get(name: string): Promise<PriorityClassView> {
    const record = await this.classes.get(name);
    if (record === null) throw notFound(`priority class ${name}`);
    return priorityClassView(record);
  }

  /** 409 naming the teams whose ceiling it is; jobs keep the priority it gave them. */
  async delete(name: string, caller: Principal): Promise<void> {
    const result = await this.classes.delete(name, caller.subject);
    this.choices.invalidate();
    if (result.outcome === 'missing') throw notFound(`priority class ${name}`);
    if (result.outcome === 'in-use') {
      throw new AppError(
        'IN_USE',
        `priority class ${name} is the highest class of team(s) ${result.use.teams.join(', ')}: give them another with PATCH /v1/teams/{name} { "maxPriorityClass": … } first`,
      );
    }
  }
}
