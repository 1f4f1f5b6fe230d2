import { readdirSync } from 'node:fs';
import { join } from 'node:path';

// Breadth-first, without git: hidden, dependency and build directories skipped; bounded by `maxEntries`.

const SKIP_DIRS = new Set(['node_modules', 'dist', 'build', 'out', 'target', 'vendor', 'coverage', '__pycache__']);

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
