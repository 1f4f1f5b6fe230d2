import { lstatSync, mkdirSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { CairnError } from '../core/errors.js';

// cairn never writes through a symbolic link (SPEC §2). A clone can carry committed links
// (`.cairn/artifacts -> ~/.ssh`, `.cairn/cache -> /somewhere`), so every writer names the directory
// it writes inside, and that directory and each one below it down to the file must be real
// directories; files themselves are created with O_EXCL or O_NOFOLLOW, or replaced by rename,
// none of which follows a link.

/**
 * Make sure `dir` exists as a real directory inside `within` (creating what is missing, `within`
 * included but not its parents: a project removed meanwhile is not made again by a run still
 * writing to it): neither `within` nor any directory below it on the way may be a symbolic link.
 */
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

/**
 * True for a real directory; false for anything else that exists; undefined when missing. Throws on a symbolic link.
 */
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
