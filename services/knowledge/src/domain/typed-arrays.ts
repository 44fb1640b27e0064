/** The typed arrays the index grows (slots, postings, vocabularies). */
type Growable = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float32Array | Float64Array;

/** Copies `from` into the start of the larger `to` and returns `to`. */
export function grown<T extends Growable>(from: T, to: T): T {
  to.set(from);
  return to;
}
