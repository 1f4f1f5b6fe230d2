import { existsSync, mkdirSync } from 'node:fs';
import { jsonErrorPlace } from '../core/json.js';
import { dirname, join } from 'node:path';
import { CairnError } from '../core/errors.js';
import { writeFileAtomic } from '../io/atomic.js';
import { readSmallFile } from '../io/read.js';
import { mkdirNoFollow } from '../io/safe.js';
import { CONFIG_CAP } from './config.js';
import type { Location } from './root.js';

// `cairn init`: logs merge by union; everything derived stays out of git (SPEC §1.2).

const GITIGNORE_LINES = [
  'cache/',
  'artifacts/',
  'memory/knowledge.active.jsonl',
  'memory/knowledge.audit.jsonl',
  'memory/session-state.md',
  '*.lock',
  '*.tmp',
];
const GITATTRIBUTES_LINES = [
  'events.jsonl merge=union',
  'memory/knowledge.jsonl merge=union',
  'memory/knowledge.archive.jsonl merge=union',
  'landings.jsonl merge=union',
];

/** A larger settings file is not ours to rewrite. */
const SETTINGS_CAP = 1024 * 1024;

/** Keeps every line; a symbolic link is refused, not read (its target would be copied into a committed file). */
export function ensureLines(path: string, wanted: string[], within: string): string[] {
  const current = readSmallFile(path, SETTINGS_CAP, true)?.toString('utf8') ?? '';
  const have = new Set(current.split(/\r?\n/).map((l) => l.trim()));
  const missing = wanted.filter((l) => !have.has(l));
  if (missing.length === 0) return [];
  const prefix = current === '' || current.endsWith('\n') ? current : current + '\n';
  writeFileAtomic(path, prefix + missing.join('\n') + '\n', within);
  return missing;
}

/** None when it is missing or unreadable. */
export function readGitattributes(dir: string): string[] {
  try {
    return (readSmallFile(join(dir, '.gitattributes'), SETTINGS_CAP, true)?.toString('utf8') ?? '').split(/\r?\n/).map((l) => l.trim());
  } catch {
    return [];
  }
}

export function initStore(dir: string): { created: boolean; added: string[] } {
  const created = !existsSync(dir);
  if (created) mkdirSync(dirname(dir), { recursive: true });
  mkdirNoFollow(dir, join(dir, 'cache'));
  const added = [
    ...ensureLines(join(dir, '.gitignore'), GITIGNORE_LINES, dir).map((l) => `.gitignore: ${l}`),
    ...ensureLines(join(dir, '.gitattributes'), GITATTRIBUTES_LINES, dir).map((l) => `.gitattributes: ${l}`),
  ];
  return { created, added };
}

/** A recorded id outlives a move, a new remote, a clone (SPEC §1.2); null for a shared --dir store. */
export function recordProjectId(location: Location): string | null {
  if (!location.ownStore) return null;
  const path = join(location.dir, 'config.json');
  const raw = readSmallFile(path, CONFIG_CAP, true)?.toString('utf8') ?? '';
  let config: Record<string, unknown> = {};
  if (raw.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (err) {
      throw new CairnError('input', `${path} is not valid JSON (${jsonErrorPlace(raw, err)}); the project id was not recorded`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new CairnError('input', `${path} is not a JSON object; the project id was not recorded`);
    config = parsed as Record<string, unknown>;
  }
  if (typeof config.project === 'string' && config.project !== '') return config.project;
  const { project: _unusable, ...settings } = config;
  writeFileAtomic(path, JSON.stringify({ project: location.project, ...settings }, null, 2) + '\n', location.dir);
  return location.project;
}
