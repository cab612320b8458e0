/** A single-consumer async queue: producers `push`, the consumer iterates; `close` ends the iteration. */
export class EventQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #waiting: ((result: IteratorResult<T>) => void) | null = null;
  #closed = false;

  /** Queues an item; ignored after close. */
  push(item: T): void {
    if (this.#closed) return;
    if (this.#waiting) {
      const resolve = this.#waiting;
      this.#waiting = null;
      resolve({ value: item, done: false });
    } else {
      this.#items.push(item);
    }
  }

  /** Ends the iteration once queued items are consumed. */
  close(): void {
    this.#closed = true;
    if (this.#waiting && this.#items.length === 0) {
      const resolve = this.#waiting;
      this.#waiting = null;
      resolve({ value: undefined, done: true });
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const item = this.#items.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.#closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.#waiting = resolve;
        });
      },
      return: () => {
        this.close();
        this.#items = [];
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
