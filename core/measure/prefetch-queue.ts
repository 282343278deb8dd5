/**
 * The prefetch queue of `bench train`'s data loader (training batches, not an AWS Batch queue): the hand-off
 * between its workers and the training loop. At most `capacity` batches are in flight (being read or ready), as
 * PyTorch's DataLoader keeps `prefetch_factor × num_workers` outstanding. A worker takes a slot before it starts
 * a batch; the consumer frees one when it takes a batch.
 */

interface Batch {
  readonly samples: number;
  readonly bytes: number;
}

export class PrefetchQueue {
  private readonly ready: Batch[] = [];
  private freeSlots: number;
  private readonly slotWaiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  private takeWaiter?: { resolve: (b: Batch | undefined) => void; reject: (e: unknown) => void };
  private producers: number;
  private failure?: { error: unknown };

  constructor(capacity: number, producers: number) {
    this.freeSlots = capacity;
    this.producers = producers;
  }

  /** Waits for a free slot (a worker, before it starts reading a batch). */
  acquire(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure.error);
    if (this.freeSlots > 0) {
      this.freeSlots--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.slotWaiters.push({ resolve, reject }));
  }

  /** Gives back a slot a worker took but found no work for. */
  release(): void {
    this.freeSlot();
  }

  /** A worker's finished batch (it holds a slot). */
  push(batch: Batch): void {
    if (this.takeWaiter) {
      const waiter = this.takeWaiter;
      this.takeWaiter = undefined;
      this.freeSlot();
      waiter.resolve(batch);
    } else this.ready.push(batch);
  }

  /** A worker has no more batches; after the last one, `take` answers undefined. */
  producerDone(): void {
    this.producers--;
    if (this.producers === 0 && this.ready.length === 0 && this.takeWaiter) {
      this.takeWaiter.resolve(undefined);
      this.takeWaiter = undefined;
    }
  }

  /** Stops everything waiting: workers and the consumer get `error`. */
  fail(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    for (const w of this.slotWaiters.splice(0)) w.reject(error);
    this.takeWaiter?.reject(error);
    this.takeWaiter = undefined;
  }

  /** The next ready batch (freeing its slot), or undefined once every worker is done. One consumer. */
  take(): Promise<Batch | undefined> {
    if (this.failure) return Promise.reject(this.failure.error);
    const batch = this.ready.shift();
    if (batch) {
      this.freeSlot();
      return Promise.resolve(batch);
    }
    if (this.producers === 0) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => (this.takeWaiter = { resolve, reject }));
  }

  private freeSlot(): void {
    const waiter = this.slotWaiters.shift();
    if (waiter) waiter.resolve();
    else this.freeSlots++;
  }
}
