/**
 * Which drives a standby's takeover is still re-attaching while it already serves
 * (PreparedTakeover.serving): one promise per drive not re-attached yet, settled once it is (or
 * failed), and one for them all. The Driver asks it before a create (the caps count every drive
 * once all are back) and hands it to the gate through `driver.adoption(id?)`.
 */
export class AdoptionTracker {
  private readonly adopting = new Map<string, Promise<void>>();
  private allAdopted: Promise<void> | undefined;

  /** Marks `ids` as being re-attached; the callback settles one, `finish` every one left. */
  track(ids: readonly string[]): ((id: string) => void) & { finish(): void } {
    const resolvers = new Map<string, () => void>();
    let resolveAll!: () => void;
    this.allAdopted = new Promise((r) => {
      resolveAll = r;
    });
    for (const id of ids) this.adopting.set(id, new Promise((r) => resolvers.set(id, r)));
    const settle = (id: string): void => {
      resolvers.get(id)?.();
      resolvers.delete(id);
      this.adopting.delete(id);
      if (this.adopting.size === 0) {
        this.allAdopted = undefined;
        resolveAll();
      }
    };
    return Object.assign(settle, {
      finish: () => {
        for (const id of [...resolvers.keys()]) settle(id);
        this.allAdopted = undefined;
        resolveAll();
      },
    });
  }

  /**
   * A promise settled once drive `id` is re-attached or failed, or, without an id, once every
   * drive is; undefined when there is nothing to wait for (the common case: no await on the call path).
   */
  adoption(id?: string): Promise<void> | undefined {
    if (id === undefined) return this.allAdopted;
    return this.adopting.get(id);
  }
}
