import { readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { gitDirOf } from '../store/root.js';

// What a session is about, for the auto-recall query (SPEC §4.4), in order of weight: the prompt,
// the titles of beads in progress and open, the words of the git branch, the names of the files
// changed since git last wrote its index. All read without spawning git.

export interface SessionContext {
  prompt: string | null;
  beadTitles: string[];
  branch: string | undefined;
  changedFiles: string[];
}

/** The context as one text, most important first (query terms are taken in this order). */
export function contextText(c: SessionContext): string {
  return [c.prompt ?? '', ...c.beadTitles, branchWords(c.branch ?? '').join(' '), ...c.changedFiles].filter(Boolean).join('\n');
}

// Conventional prefixes and long-lived branch names say nothing about the topic.
const BRANCH_NOISE = new Set(['feat', 'feature', 'fix', 'bugfix', 'hotfix', 'chore', 'refactor', 'docs', 'doc', 'test', 'tests', 'wip', 'main', 'master', 'develop', 'dev', 'release', 'head']);

/** `feat/codex-cli_support` → codex, cli, support. */
export function branchWords(branch: string): string[] {
  return branch.split(/[-_/.]+/).filter((w) => w !== '' && !BRANCH_NOISE.has(w.toLowerCase()));
}

// Skipped while looking for changed files: dependencies, build output, caches.
const SKIP_DIRS = new Set(['node_modules', 'dist', 'build', 'out', 'target', 'vendor', 'coverage', '__pycache__']);

/**
 * Names (without extension) of the files modified after git last wrote its index — edited since the
 * last checkout, add or commit — newest first. A bounded walk: it stops after `maxEntries` directory
 * entries, so a huge tree costs a few milliseconds at most. None outside a git work tree.
 */
export function changedFiles(root: string, limit = 10, maxEntries = 4000): string[] {
  const gitDir = gitDirOf(root);
  let since: number;
  try {
    since = statSync(join(gitDir ?? '', 'index')).mtimeMs;
  } catch {
    return [];
  }
  const found: { name: string; mtime: number }[] = [];
  const queue = [root];
  let seen = 0;
  while (queue.length && seen < maxEntries) {
    const dir = queue.shift()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++seen > maxEntries) break;
      if (e.name.startsWith('.')) continue;
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) queue.push(path);
      } else if (e.isFile()) {
        try {
          const mtime = statSync(path).mtimeMs;
          if (mtime > since) found.push({ name: e.name.slice(0, e.name.length - extname(e.name).length), mtime });
        } catch {
          // vanished meanwhile
        }
      }
    }
  }
  return [...new Set(found.sort((a, b) => b.mtime - a.mtime).map((f) => f.name))].slice(0, limit);
}
