import { Inject, Injectable } from '@nestjs/common';
import { Config } from '#common';
import { PriorityClassRepository, type PriorityChoice, type PriorityChoices } from '#db';
import { ReloadedSnapshot } from './reloaded-snapshot.js';

/**
 * The priority classes and the teams' ceilings, as submissions read them: kept in memory for
 * QM_TOKEN_CACHE_TTL_MS (as tokens are — both say what a caller may do), reloaded as a whole when older, and
 * dropped at once when this process changes a class or a team. Another API replica's change applies here
 * within the TTL. A team the cached copy does not know is looked up again before it is taken as unknown, so
 * a team created elsewhere is never treated as one without a ceiling. TTL 0: read on every submission.
 */
@Injectable()
export class PriorityChoiceCache {
  private readonly snapshot: ReloadedSnapshot<PriorityChoices>;

  constructor(@Inject(PriorityClassRepository) classes: PriorityClassRepository, @Inject(Config) config: Config) {
    this.snapshot = new ReloadedSnapshot(() => classes.choices(), () => config.tokenCacheTtlMs);
  }

  async choiceFor(team: string): Promise<PriorityChoice> {
    let choices = await this.snapshot.current();
    if (!choices.ceilings.has(team)) choices = await this.snapshot.reload();
    return { classes: choices.classes, ceiling: choices.ceilings.has(team) ? choices.ceilings.get(team)! : undefined };
  }

  /** A class or a team changed through this process. */
  invalidate(): void {
    this.snapshot.invalidate();
  }
}
