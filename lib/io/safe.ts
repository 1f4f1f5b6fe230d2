import { lstatSync, mkdirSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { CairnError } from '../core/errors.js';

// Never a write through a symbolic link (SPEC §2): a clone can carry committed links (`.cairn/cache -> ~/.ssh`).

/** Made if missing (`within` too, never its parents: a removed project is not made again). */
export function mkdirNoFollow(within: string, dir: string): void {
  const rel = relative(within, dir);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new CairnError('store', `${dir} is outside ${within}`);
  let current = within;
  for (const part of ['', ...rel.split(sep).filter(Boolean)]) {
    current = part ? join(current, part) : current;
    let isDir = realDirectory(current);
    if (isDir === undefined) {
      try {
        mkdirSync(current);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST')
          throw new CairnError('store', `cannot create ${current}: ${(err as Error).message}`);
      }
      isDir = realDirectory(current);
    }
    if (isDir === false) throw new CairnError('store', `${current} is not a directory`);
  }
}

/** Undefined when missing; throws on a symbolic link. */
function realDirectory(path: string): boolean | undefined {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return undefined;
  }
  if (st.isSymbolicLink()) throw new CairnError('store', `${path} is a symbolic link; cairn never writes through one`);
  return st.isDirectory();
}
