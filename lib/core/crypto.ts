import { createRequire } from 'node:module';
import type * as Crypto from 'node:crypto';

// node:crypto, loaded on first use. With the stream modules it brings along it costs a process about a
// third of `node -e 0`, and most hook runs need none of it: a session start over an index that is up
// to date hashes nothing, and a run that writes no file needs no random name.

const require = createRequire(import.meta.url);
let crypto: typeof Crypto | undefined;
const load = () => (crypto ??= require('node:crypto') as typeof Crypto);

export function sha256(data: string | Buffer): string {
  return load().createHash('sha256').update(data).digest('hex');
}

export function randomBytes(size: number): Buffer {
  return load().randomBytes(size);
}
