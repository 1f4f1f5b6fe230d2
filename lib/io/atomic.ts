import { randomBytes } from '../core/crypto.js';
import { closeSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CairnError } from '../core/errors.js';
import { mkdirNoFollow } from './safe.js';

/**
 * Write a file whole inside `within`: a temp file beside it (created exclusively), then rename.
 * No directory on the way may be a symbolic link, and a link at the path itself is replaced, never
 * followed (SPEC §2). The content is a text, bytes, or what `write` writes to the open temp file (a
 * large file copied in pieces, never whole in memory).
 */
export function writeFileAtomic(
  path: string,
  content: string | Uint8Array | ((fd: number) => void),
  within: string,
): void {
  mkdirNoFollow(within, dirname(path));
  const tmp = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    const fd = openSync(tmp, 'wx');
    try {
      if (typeof content === 'function') content(fd);
      else writeFileSync(fd, content);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    if (err instanceof CairnError) throw err; // from what `write` read: said as it is
    throw new CairnError(
      'store',
      `cannot write ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}
