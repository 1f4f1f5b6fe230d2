import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../io/atomic.js';

// `cairn init`: the store directory with its git settings. Committed JSONL logs merge by union;
// everything derived stays out of git (SPEC §1.2).

export const GITIGNORE_LINES = ['cache/', 'artifacts/', 'memory/knowledge.active.jsonl', 'memory/knowledge.audit.jsonl', 'memory/session-state.md', '*.lock', '*.tmp'];
export const GITATTRIBUTES_LINES = ['events.jsonl merge=union', 'memory/knowledge.jsonl merge=union', 'memory/knowledge.archive.jsonl merge=union'];

/** Add the lines a file lacks, keeping every line it has. Returns the lines added. */
export function ensureLines(path: string, wanted: string[]): string[] {
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const have = new Set(current.split(/\r?\n/).map((l) => l.trim()));
  const missing = wanted.filter((l) => !have.has(l));
  if (missing.length === 0) return [];
  const prefix = current === '' || current.endsWith('\n') ? current : current + '\n';
  writeFileAtomic(path, prefix + missing.join('\n') + '\n');
  return missing;
}

export function initStore(dir: string): { created: boolean; added: string[] } {
  const created = !existsSync(dir);
  mkdirSync(join(dir, 'cache'), { recursive: true });
  const added = [
    ...ensureLines(join(dir, '.gitignore'), GITIGNORE_LINES).map((l) => `.gitignore: ${l}`),
    ...ensureLines(join(dir, '.gitattributes'), GITATTRIBUTES_LINES).map((l) => `.gitattributes: ${l}`),
  ];
  return { created, added };
}

/** The crontab lines for nightly maintenance: pattern deprecation (SPEC §3.4) and knowledge rotation (§4.5). */
export function cronLines(root: string): string[] {
  const cd = `cd ${/^[\w./-]+$/.test(root) ? root : JSON.stringify(root)}`;
  return [`17 3 * * * ${cd} && npx --no-install cairn maintain --quiet`, `27 3 * * * ${cd} && npx --no-install cairn rotate --quiet`];
}
