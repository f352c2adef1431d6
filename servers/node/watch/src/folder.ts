// The folders a watch server holds: N key-value pairs of about `pairBytes` bytes each.
// Values come from a fixed pseudo-random sequence, so every strategy and every start of
// the server holds the same bytes (the byte-identity test depends on it).

export interface KV {
  key: string;
  value: Buffer;
}

export interface FolderSpec {
  name: string;
  pairs: number;
  pairBytes: number;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export function keyOf(folder: string, index: number): string {
  return `/${folder}/key-${String(index).padStart(6, '0')}`;
}

/** The pairs of a folder; each key + value adds up to `pairBytes` (at least 1 value byte). */
export function makeFolder(spec: FolderSpec): KV[] {
  const pairs: KV[] = [];
  // xorshift32: deterministic and fast; the content only needs to be fixed, not random.
  let state = 2463534242;
  for (let i = 1; i <= spec.pairs; i++) {
    const key = keyOf(spec.name, i);
    const size = Math.max(1, spec.pairBytes - Buffer.byteLength(key));
    const value = Buffer.allocUnsafe(size);
    for (let j = 0; j < size; j++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      value[j] = ALPHABET.charCodeAt((state >>> 0) % ALPHABET.length);
    }
    pairs.push({ key, value });
  }
  return pairs;
}
