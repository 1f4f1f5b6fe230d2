import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Write a file whole: a temp file beside it, then rename (a symlink in the way is replaced, never followed). */
export function writeFileAtomic(path: string, text: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { flag: 'wx' });
  renameSync(tmp, path);
}
