import { statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { walkFiles } from '../io/walk.js';
import { gitDirOf } from '../store/root.js';

// A session's topics for auto-recall (SPEC §4.4), by weight; no git spawned.

export interface SessionContext {
  prompt: string | null;
  beadTitles: string[];
  branch: string | undefined;
  changedFiles: string[];
}

/** Most important first: query terms are taken in this order. */
export function contextText(c: SessionContext): string {
  return [c.prompt ?? '', ...c.beadTitles, branchWords(c.branch ?? '').join(' '), ...c.changedFiles].filter(Boolean).join('\n');
}

const BRANCH_NOISE = new Set([
  'feat',
  'feature',
  'fix',
  'bugfix',
  'hotfix',
  'chore',
  'refactor',
  'docs',
  'doc',
  'test',
  'tests',
  'wip',
  'main',
  'master',
  'develop',
  'dev',
  'release',
  'head',
]);

/** `feat/codex-cli_support` → codex, cli, support */
export function branchWords(branch: string): string[] {
  return branch.split(/[-_/.]+/).filter((w) => w !== '' && !BRANCH_NOISE.has(w.toLowerCase()));
}

/** Newest first (a bounded walk); none outside git. */
export function changedFiles(root: string, limit = 10, maxEntries = 4000): string[] {
  let since: number;
  try {
    since = statSync(join(gitDirOf(root) ?? '', 'index')).mtimeMs;
  } catch {
    return [];
  }
  const found: { name: string; mtime: number }[] = [];
  walkFiles(
    root,
    (path, relative) => {
      try {
        const mtime = statSync(path).mtimeMs;
        const name = basename(relative);
        if (mtime > since) found.push({ name: name.slice(0, name.length - extname(name).length), mtime });
      } catch {
        // vanished meanwhile
      }
    },
    maxEntries,
  );
  return [...new Set(found.sort((a, b) => b.mtime - a.mtime).map((f) => f.name))].slice(0, limit);
}
