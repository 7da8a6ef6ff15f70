import { Inject, Injectable } from '@nestjs/common';
import { Config } from '#common';
import { PriorityClassRepository, type PriorityChoice, type PriorityChoices } from '#db';

/**
 * The priority classes and the teams' ceilings, as submissions read them: kept in memory for
 * QM_TOKEN_CACHE_TTL_MS (as tokens are — both say what a caller may do), reloaded as a whole when older, and
 * dropped at once when this process changes a class or a team. Another API replica's change applies here
 * within the TTL. A team the cached copy does not know is looked up again before it is taken as unknown, so
 * a team created elsewhere is never treated as one without a ceiling. TTL 0: read on every submission.
 */
@Injectable()
export class PriorityChoiceCache {
  private loaded: { at: number; choices: PriorityChoices } | undefined;
  private loading: Promise<PriorityChoices> | undefined;
  /** Bumped by every change: a load that began before it is not kept. */
  private generation = 0;

  constructor(
    @Inject(PriorityClassRepository) private readonly classes: PriorityClassRepository,
    @Inject(Config) private readonly config: Config,
  ) {}

  async choiceFor(team: string): Promise<PriorityChoice> {
    let choices = await this.current();
    if (!choices.ceilings.has(team)) choices = await this.reload();
    return { classes: choices.classes, ceiling: choices.ceilings.has(team) ? choices.ceilings.get(team)! : undefined };
  }

  /** A class or a team changed through this process. */
  invalidate(): void {
    this.generation += 1;
    this.loaded = undefined;
    this.loading = undefined;
  }

  private async current(): Promise<PriorityChoices> {
    const ttl = this.config.tokenCacheTtlMs;
    if (ttl > 0 && this.loaded !== undefined && Date.now() - this.loaded.at < ttl) return this.loaded.choices;
    return this.reload();
  }

  private reload(): Promise<PriorityChoices> {
    if (this.loading !== undefined) return this.loading;
    const generation = this.generation;
    const at = Date.now();
    const load: Promise<PriorityChoices> = this.classes.choices().then(
      (choices) => {
        if (generation === this.generation) this.loaded = { at, choices };
        if (this.loading === load) this.loading = undefined;
        return choices;
      },
      (error: unknown) => {
        if (this.loading === load) this.loading = undefined;
        throw error;
      },
    );
    this.loading = load;
    return load;
  }
}
