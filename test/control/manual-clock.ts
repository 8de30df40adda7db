import type { Clock, TimerHandle } from '../../lib/common/clock.js';

/** A Clock that moves only when the test says so; timers fire in deadline order. */
export class ManualClock implements Clock {
  #now = 0;
  #timers: { at: number; seq: number; fn: () => void }[] = [];
  #seq = 0;

  now(): number {
    return this.#now;
  }

  after(ms: number, fn: () => void): TimerHandle {
    const timer = { at: this.#now + ms, seq: this.#seq++, fn };
    this.#timers.push(timer);
    return { cancel: () => void (this.#timers = this.#timers.filter((t) => t !== timer)) };
  }

  get armed(): number {
    return this.#timers.length;
  }

  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = due.at;
      due.fn();
    }
    this.#now = until;
  }
}
