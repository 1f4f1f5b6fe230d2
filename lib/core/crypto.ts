import { createRequire } from 'node:module';
import type * as Crypto from 'node:crypto';

// Loaded on first use: costly to load, and most hook runs hash nothing.

const require = createRequire(import.meta.url);
let crypto: typeof Crypto | undefined;
const load = () => (crypto ??= require('node:crypto') as typeof Crypto);

export function sha256(data: string | Buffer): string {
  return load().createHash('sha256').update(data).digest('hex');
}

export function randomBytes(size: number): Buffer {
  return load().randomBytes(size);
}
