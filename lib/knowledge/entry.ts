import { languagesOf } from '../core/languages.js';
import { shortHash } from '../core/text.js';

// A knowledge entry (SPEC §4.1): Lavra's line format plus cairn's project id and curation fields.

export const KNOWLEDGE_TYPES = ['learned', 'decision', 'fact', 'pattern', 'investigation', 'deviation', 'must-check'] as const;
export type KnowledgeType = (typeof KNOWLEDGE_TYPES)[number];

export const CURATION_STATUSES = ['canonical', 'superseded', 'needs_review'] as const;
export type CurationStatus = (typeof CURATION_STATUSES)[number];

export interface KnowledgeEntry {
  key: string;
  /** A foreign log may hold other types, kept as written. */
  type: string;
  content: string;
  source: string;
  tags: string[];
  ts: number;
  bead: string;
  /** SPEC §1.2; absent in logs written before cairn. */
  project?: string;
  status?: CurationStatus;
  supersedes?: string[];
  superseded_by?: string;
  merged_from?: string[];
  review_source?: string;
  review_reason?: string;
}

/** UTF-8 bytes, cut at a character boundary (SPEC §4.2). */
export const MAX_CONTENT_BYTES = 4096;
export const MAX_TAGS = 12;
const SLUG_CHARS = 60;

// the prefix must lead the body (SPEC §4.2)
const PREFIX = /^\s*(LEARNED|DECISION|FACT|PATTERN|INVESTIGATION|DEVIATION|MUST-CHECK|SKIP):[ \t]*/;

export function parseTypedText(body: string): { type: KnowledgeType; content: string } | 'skip' | undefined {
  const m = PREFIX.exec(body);
  if (!m) return undefined;
  if (m[1] === 'SKIP') return 'skip';
  const content = body.slice(m[0].length).trim();
  return content ? { type: m[1].toLowerCase() as KnowledgeType, content } : undefined;
}

/** Content with no [a-z0-9] (Japanese) gets a short hash. */
export function slugOf(content: string): string {
  const slug = Array.from(content)
    .slice(0, SLUG_CHARS)
    .join('')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug || shortHash(content).slice(0, 12);
}

export function keyOf(type: string, content: string): string {
  return `${type}-${slugOf(content)}`;
}

/** `learned-x`, `learned-x-2`, …: the n-th entry whose content slugs alike. */
export function suffixedKey(base: string, n: number): string {
  return n <= 1 ? base : `${base}-${n}`;
}

/** SPEC §4.1; config `knowledge.tags` adds words. */
export const DEFAULT_TAG_WORDS = [
  'api',
  'auth',
  'oauth',
  'jwt',
  'security',
  'permission',
  'secret',
  'token',
  'session',
  'database',
  'sqlite',
  'postgres',
  'mysql',
  'redis',
  'sql',
  'schema',
  'migration',
  'query',
  'index',
  'cache',
  'config',
  'env',
  'test',
  'ci',
  'build',
  'deploy',
  'release',
  'docker',
  'kubernetes',
  'install',
  'dependency',
  'version',
  'hook',
  'plugin',
  'cli',
  'ui',
  'css',
  'react',
  'http',
  'network',
  'webhook',
  'queue',
  'job',
  'performance',
  'memory',
  'timeout',
  'retry',
  'concurrency',
  'lock',
  'async',
  'error',
  'crash',
  'bug',
  'logging',
  'validation',
  'parser',
  'regex',
  'encoding',
  'unicode',
  'json',
  'yaml',
  'shell',
  'git',
  'merge',
  'agent',
  'prompt',
  'model',
  'search',
  'architecture',
  'convention',
];

// anchored where a run of path characters starts: no rescans (quadratic)
const FILE_MENTION = /(?<![A-Za-z0-9_./-])[A-Za-z0-9_./-]*[A-Za-z0-9_]\.([A-Za-z0-9]{1,6})\b/g;

/** The type, vocabulary words (plurals allowed), languages of the files named; at most 12. */
export function tagsFor(type: string, content: string, words: readonly string[] = DEFAULT_TAG_WORDS): string[] {
  const tags = new Set<string>([type]);
  const lower = content.toLowerCase();
  const found: { word: string; at: number }[] = [];
  for (const word of words) {
    // a regex per word costs far more than a substring search: only words whose stem occurs
    if (!lower.includes(stemOf(word))) continue;
    const at = lower.search(wholeWord(word));
    if (at >= 0) found.push({ word, at });
  }
  found.sort((a, b) => a.at - b.at);
  for (const f of found) tags.add(f.word);
  for (const m of content.matchAll(FILE_MENTION)) for (const language of languagesOf(m[0])) tags.add(language);
  return [...tags].slice(0, MAX_TAGS);
}

/** retry, retries: `retr` */
function stemOf(word: string): string {
  const lower = word.toLowerCase();
  return lower.endsWith('y') ? lower.slice(0, -1) : lower;
}

const wordPatterns = new Map<string, RegExp>();
function wholeWord(word: string): RegExp {
  let re = wordPatterns.get(word);
  if (!re) {
    const escaped = word.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const inflected = escaped.endsWith('y') ? `${escaped.slice(0, -1)}(?:y|ies)` : `${escaped}(?:e?s)?`;
    re = new RegExp(`(?<![\\p{L}\\p{N}_])${inflected}(?![\\p{L}\\p{N}_])`, 'u');
    wordPatterns.set(word, re);
  }
  return re;
}

export interface NewEntry {
  type: KnowledgeType;
  content: string;
  bead: string;
  source: string;
  ts: number;
  project: string;
  tagWords?: readonly string[];
}

export function makeEntry(e: NewEntry): KnowledgeEntry {
  return {
    key: keyOf(e.type, e.content),
    type: e.type,
    content: e.content,
    source: e.source,
    tags: tagsFor(e.type, e.content, e.tagWords),
    ts: e.ts,
    bead: e.bead,
    project: e.project,
  };
}
