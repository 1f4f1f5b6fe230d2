import { readdirSync } from 'node:fs';
import { join } from 'node:path';

// A bounded walk of a work tree, breadth first, for the few places that look at the project's files
// without git (auto-recall's changed files, the sanitiser's anchors): hidden entries, dependencies and
// build output are skipped, and it stops after `maxEntries` directory entries, so a huge tree costs a
// bounded amount of time.

const SKIP_DIRS = new Set(['node_modules', 'dist', 'build', 'out', 'target', 'vendor', 'coverage', '__pycache__']);

/** Call `visit` with each file's path (absolute) and its path relative to `root` (with `/`). */
export function walkFiles(root: string, visit: (path: string, relative: string) => void, maxEntries: number): void {
  const queue: [string, string][] = [[root, '']];
  let seen = 0;
  while (queue.length) {
    const [dir, rel] = queue.shift()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++seen > maxEntries) return;
      if (e.name.startsWith('.')) continue;
      const path = join(dir, e.name);
      const relative = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) queue.push([path, relative]);
      } else if (e.isFile()) visit(path, relative);
    }
  }
}
