/** One block of assistant text and the log seq it was written at. */
export interface OutputBlock {
  seq: number;
  text: string;
}

/** The seed's output buffer: the last `max` (200) text blocks of a session, each tagged with its log seq. */
export class OutputBuffer {
  readonly max: number;
  #blocks: OutputBlock[] = [];
  #droppedUpTo = 0;

  constructor(max = 200) {
    this.max = max;
  }

  /** Adds a block, dropping the oldest beyond `max`. */
  push(seq: number, text: string): void {
    this.#blocks.push({ seq, text });
    if (this.#blocks.length > this.max) {
      const gone = this.#blocks.splice(0, this.#blocks.length - this.max);
      this.#droppedUpTo = gone[gone.length - 1]?.seq ?? this.#droppedUpTo;
    }
  }

  /** The last `n` blocks (all when omitted), oldest first. */
  last(n?: number): OutputBlock[] {
    return n === undefined ? [...this.#blocks] : this.#blocks.slice(Math.max(0, this.#blocks.length - n));
  }

  /** Blocks written after log seq `seq`, oldest first. */
  after(seq: number): OutputBlock[] {
    return this.#blocks.filter((b) => b.seq > seq);
  }

  /** True when every block written after `seq` is still in the buffer (nothing after it was dropped). */
  covers(seq: number): boolean {
    return this.#droppedUpTo <= seq;
  }

  get size(): number {
    return this.#blocks.length;
  }

  /** Seq of the newest block, or 0. */
  get lastSeq(): number {
    return this.#blocks[this.#blocks.length - 1]?.seq ?? 0;
  }
}
