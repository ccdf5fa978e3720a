import type { AsyncSubscription, Event } from '@parcel/watcher';

/** What the watcher saw for one path over the run. */
export interface Seen {
  first: number;
  last: number;
  created: boolean;
  updated: boolean;
  deleted: boolean;
}

export interface WatcherStatus {
  backend: 'inotify';
  /** Events delivered. */
  events: number;
  /** Failures the watcher reported while running, or why it could not start. */
  errors: string[];
  /** Milliseconds to set up the watches (a crawl of each root). */
  setupMs: number;
}

/**
 * Live events under the roots from @parcel/watcher with the inotify backend pinned (otherwise it prefers a
 * Watchman found on PATH, and results would depend on the machine). Used for timing and for files that come
 * and go within the run; never as proof of anything. Its known gaps: it drops the kernel's queue-overflow
 * notice, it merges a create and a delete of one path within its 50 ms batch into nothing, it cannot see
 * writes through a hard link that lives outside the roots, and it sees nothing before its watches exist.
 */
export class Watcher {
  readonly seen = new Map<string, Seen>();
  readonly status: WatcherStatus = { backend: 'inotify', events: 0, errors: [], setupMs: 0 };
  private subscriptions: AsyncSubscription[] = [];
  private lastEvent = 0;

  static async start(roots: readonly string[], ignore: readonly string[]): Promise<Watcher> {
    const watcher = new Watcher();
    const started = performance.now();
    let parcel: typeof import('@parcel/watcher');
    try {
      parcel = await import('@parcel/watcher');
    } catch (error) {
      watcher.status.errors.push(`cannot load @parcel/watcher: ${(error as Error).message}`);
      return watcher;
    }
    for (const root of roots) {
      try {
        watcher.subscriptions.push(
          await parcel.subscribe(root, (error, events) => watcher.record(error, events), {
            backend: 'inotify',
            ignore: [...ignore],
          }),
        );
      } catch (error) {
        watcher.status.errors.push(`${root}: ${(error as Error).message}`);
      }
    }
    watcher.status.setupMs = performance.now() - started;
    return watcher;
  }

  private record(error: Error | null, events: Event[]): void {
    const now = Date.now();
    if (error) this.status.errors.push(error.message);
    this.status.events += events.length;
    if (events.length > 0) this.lastEvent = now;
    for (const event of events) {
      const seen = this.seen.get(event.path) ?? {
        first: now,
        last: now,
        created: false,
        updated: false,
        deleted: false,
      };
      seen.last = now;
      if (event.type === 'create') seen.created = true;
      else if (event.type === 'update') seen.updated = true;
      else seen.deleted = true;
      this.seen.set(event.path, seen);
    }
  }

  /**
   * Waits until the watcher has been quiet for `quietMs` (it delivers in batches after 50 ms without events,
   * at most 500 ms apart), or `maxMs` at most.
   */
  async settle(quietMs = 150, maxMs = 2000): Promise<void> {
    const until = Date.now() + maxMs;
    // A batch may still be on its way even if nothing has arrived yet.
    this.lastEvent = Math.max(this.lastEvent, Date.now());
    while (Date.now() < until && Date.now() - this.lastEvent < quietMs) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async stop(): Promise<void> {
    for (const subscription of this.subscriptions) {
      try {
        await subscription.unsubscribe();
      } catch (error) {
        this.status.errors.push((error as Error).message);
      }
    }
    this.subscriptions = [];
  }
}
