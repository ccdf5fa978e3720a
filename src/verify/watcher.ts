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
  /** 'none': not watched (--no-watch); the manifest alone gave the verdict. */
  backend: 'inotify' | 'none';
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

  /**
   * Loads @parcel/watcher and asks for the subscriptions; returns at once with the watcher and a promise that
   * settles when every watch is in place. The crawl that sets up the watches runs in the watcher's own thread,
   * so the caller can take its first manifest meanwhile (and must await `ready` before the checked command
   * starts).
   */
  static async start(
    roots: readonly string[],
    ignore: readonly string[],
  ): Promise<{ watcher: Watcher; ready: Promise<void> }> {
    const watcher = new Watcher();
    const started = performance.now();
    let parcel: typeof import('@parcel/watcher');
    try {
      parcel = await import('@parcel/watcher');
    } catch (error) {
      watcher.status.errors.push(`cannot load @parcel/watcher: ${(error as Error).message}`);
      return { watcher, ready: Promise.resolve() };
    }
    const subscribing = roots.map(async (root) => {
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
    });
    const ready = Promise.all(subscribing).then(() => {
      watcher.status.setupMs = performance.now() - started;
    });
    return { watcher, ready };
  }

  /** No watcher (--no-watch): the manifest alone gives the verdict. */
  static off(): Watcher {
    const watcher = new Watcher();
    watcher.status.backend = 'none';
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
   * at most 500 ms apart), or `maxMs` at most, counted from `since` (when the checked command ended: the
   * caller may walk the tree meanwhile, which makes no events).
   */
  async settle(quietMs = 150, maxMs = 2000, since = Date.now()): Promise<void> {
    if (this.status.backend === 'none') return;
    const until = since + maxMs;
    // A batch may still be on its way even if nothing has arrived yet.
    this.lastEvent = Math.max(this.lastEvent, since);
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
