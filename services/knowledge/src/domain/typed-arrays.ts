/** The typed arrays the index grows (slots, postings, vocabularies). */
type Growable = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float32Array | Float64Array;

/** Copies `from` into the start of the larger `to` and returns `to`. */
export function grown<T extends Growable>(from: T, to: T): T {
  to.set(from);
  return to;
}

/**
 * One typed array reused from call to call, for code that takes it and reads it last without
 * yielding in between (no await): a new typed array of more than 64 bytes costs about 0.5–1 µs
 * (its buffer is allocated outside V8's heap and swept by the collector), a view of a kept one
 * about 40 ns, and a search needs a dozen (docs/performance.md). A view is valid until the next
 * `take` of the same scratch; one scratch per array alive at the same time.
 */
export class Scratch<T extends Growable> {
  private buffer: T;

  constructor(private readonly make: (length: number) => T) {
    this.buffer = make(0);
  }

  /** A view of `length` elements, all 0. */
  take(length: number): T {
    if (this.buffer.length < length)
      this.buffer = this.make(Math.max(length, 2 * this.buffer.length));
    const view = this.buffer.subarray(0, length) as T;
    view.fill(0);
    return view;
  }
}
