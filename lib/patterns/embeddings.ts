import { createRequire } from 'node:module';
import { jsonErrorPlace } from '../core/json.js';
import type { Database } from '../store/db.js';
import type { Store } from '../store/store.js';
import type { Deadline } from '../core/deadline.js';
import { CairnError } from '../core/errors.js';
import { listPatterns } from './queries.js';
import { sha256 } from '../core/text.js';
import { patternDb } from '../events/log.js';
import { NO_PROGRESS, type Progress } from '../core/progress.js';

// loaded only when a provider runs: format-patterns bundles this module, most runs embed nothing
const require = createRequire(import.meta.url);

// Optional embeddings (SPEC §6), cached by provider and text: a changed provider never mixes its vectors.

export const EMBED_BATCH = 64;
/** When the command has no deadline. */
export const EMBED_TIMEOUT_MS = 60_000;

export interface EmbedItem {
  id: string;
  text: string;
}

export interface ParsedVectors {
  vectors: Map<string, Float32Array>;
  problems: string[];
}

export function embeddingKey(command: string, text: string): string {
  return sha256(`${command}\u0000${text}`).slice(0, 32);
}

export function providerTimeout(deadline: Deadline): number {
  return Number.isFinite(deadline.at) ? deadline.remaining() : EMBED_TIMEOUT_MS;
}

/** Of one dimension: given, else the most common. */
export function parseVectors(stdout: string, wanted: Set<string>, dimensions?: number): ParsedVectors {
  const candidates: { where: string; id: string; vector: number[] }[] = [];
  const problems: string[] = [];
  stdout.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    const where = `provider output line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      problems.push(`${where} is not JSON (${jsonErrorPlace(line, err)})`);
      return;
    }
    const { id, vector } = (value ?? {}) as { id?: unknown; vector?: unknown };
    if (typeof id !== 'string' || !wanted.has(id)) {
      problems.push(`${where} has an unknown id ${String(JSON.stringify(id)).slice(0, 40)}`);
    } else if (!Array.isArray(vector) || vector.length === 0 || !vector.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      problems.push(`${where} (id ${id}) has no vector of finite numbers`);
    } else {
      candidates.push({ where, id, vector });
    }
  });
  const dims = dimensions ?? mostCommon(candidates.map((c) => c.vector.length));
  const vectors = new Map<string, Float32Array>();
  for (const { where, id, vector } of candidates) {
    if (vector.length !== dims) problems.push(`${where} (id ${id}) has ${vector.length} dimensions, expected ${dims}`);
    else if (vectors.has(id)) problems.push(`${where} repeats id ${id}; kept the first`);
    else vectors.set(id, Float32Array.from(vector));
  }
  const missing = [...wanted].filter((id) => !vectors.has(id)).length;
  if (missing) problems.push(`the provider returned no usable vector for ${missing} of ${wanted.size} texts`);
  return { vectors, problems };
}

function mostCommon(values: number[]): number | undefined {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: number | undefined;
  for (const [v, n] of counts) if (best === undefined || n > counts.get(best)!) best = v;
  return best;
}

/** Failing, hanging or not starting is an error. */
export function runProvider(command: string, items: EmbedItem[], timeoutMs: number, dimensions?: number): ParsedVectors {
  // `exec`: the shell becomes the provider, so the timeout's kill reaches it
  const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
  const r = spawnSync(`exec ${command}`, {
    shell: true,
    input: items.map((item) => JSON.stringify(item)).join('\n') + '\n',
    encoding: 'utf8',
    timeout: Math.max(1, Math.floor(timeoutMs)),
    killSignal: 'SIGKILL',
    maxBuffer: 256 * 1024 * 1024,
  });
  const stderr = (r.stderr ?? '').trim().split('\n')[0]?.slice(0, 200);
  const said = stderr ? `: ${stderr}` : '';
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT') {
    throw new CairnError('input', `embeddings provider timed out after ${Math.round(timeoutMs)} ms (${command})`);
  }
  // one exiting before reading its input breaks the pipe: its exit code says more than EPIPE
  const brokePipe = (r.error as NodeJS.ErrnoException | undefined)?.code === 'EPIPE' && typeof r.status === 'number';
  if (r.error && !brokePipe) throw new CairnError('input', `embeddings provider could not run (${r.error.message})${said}`);
  if (r.status !== 0) {
    const how = r.signal ? `was killed by ${r.signal}` : `exited with code ${r.status}`;
    throw new CairnError('input', `embeddings provider ${how} (${command})${said}`);
  }
  return parseVectors(r.stdout, new Set(items.map((item) => item.id)), dimensions);
}

export function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function fromBlob(blob: Buffer): Float32Array {
  // a blob's byte offset need not be 4-aligned
  return new Float32Array(new Uint8Array(blob).buffer);
}

export function readVectors(db: Database, keys: string[]): Map<string, Float32Array> {
  const lookup = db.prepare('SELECT vector FROM embeddings WHERE key = ?');
  const out = new Map<string, Float32Array>();
  for (const key of keys) {
    const row = lookup.get(key) as { vector: Buffer } | undefined;
    if (row) out.set(key, fromBlob(row.vector));
  }
  return out;
}

export function saveVectors(db: Database, vectors: Map<string, Float32Array>): void {
  const insert = db.prepare('INSERT OR REPLACE INTO embeddings (key, vector) VALUES (?, ?)');
  db.transaction(() => {
    for (const [key, vector] of vectors) insert.run(key, toBlob(vector));
  })();
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

export function providerCommand(store: Store): string {
  const command = store.config.embeddings.command?.trim();
  if (!command) throw new CairnError('input', 'no embeddings provider: set "embeddings": {"command": "..."} in .cairn/config.json');
  return command;
}

export interface EmbedReport {
  texts: number;
  cached: number;
  embedded: number;
  failed: number;
  dimensions: number | null;
}

export function embedPatterns(store: Store, batchSize = EMBED_BATCH, progress: Progress = NO_PROGRESS): EmbedReport {
  const command = providerCommand(store);
  const byKey = new Map<string, string>();
  for (const p of listPatterns(patternDb(store), store.project, { includeDeprecated: true }))
    byKey.set(embeddingKey(command, p.text), p.text);
  const cached = readVectors(patternDb(store), [...byKey.keys()]);
  const missing = [...byKey.keys()].filter((key) => !cached.has(key));
  let dimensions: number | undefined = cached.values().next().value?.length;
  let embedded = 0;
  for (let i = 0; i < missing.length; i += batchSize) {
    progress(i, missing.length);
    const batch = missing.slice(i, i + batchSize).map((key) => ({ id: key, text: byKey.get(key)! }));
    let parsed: ParsedVectors;
    try {
      parsed = runProvider(command, batch, providerTimeout(store.deadline), dimensions);
    } catch (err) {
      if (embedded === 0) throw err;
      throw new CairnError('input', `${(err as Error).message} — after embedding ${embedded} of ${missing.length} texts (kept)`);
    }
    for (const problem of parsed.problems) store.log.warn(problem);
    // saved at once: an interrupted run keeps its progress
    saveVectors(patternDb(store), parsed.vectors);
    embedded += parsed.vectors.size;
    dimensions ??= parsed.vectors.values().next().value?.length;
  }
  return {
    texts: byKey.size,
    cached: cached.size,
    embedded,
    failed: missing.length - embedded,
    dimensions: dimensions ?? null,
  };
}

/** Any failure is the caller's to fall back from. */
export function embedQuery(command: string, text: string, timeoutMs: number): Float32Array {
  const parsed = runProvider(command, [{ id: 'query', text }], timeoutMs);
  const vector = parsed.vectors.get('query');
  if (!vector) throw new CairnError('input', `embeddings provider gave no vector for the query (${parsed.problems.join('; ')})`);
  return vector;
}

export const EMBEDDING_LINK_MIN = 0.8;

/** For findings nothing else linked (SPEC §3.9.1), in one call; a failure warns. */
export function linkByEmbedding(store: Store, findings: EmbedItem[], candidates: { id: string; text: string }[]): Map<string, string> {
  const links = new Map<string, string>();
  const command = store.config.embeddings.command?.trim();
  if (!command || findings.length === 0 || candidates.length === 0) return links;
  const cached = readVectors(
    patternDb(store),
    candidates.map((c) => embeddingKey(command, c.text)),
  );
  if (cached.size === 0) return links;
  let parsed: ParsedVectors;
  try {
    // half the time left at most: the deliberation must still be recorded in time
    const timeout = providerTimeout(store.deadline);
    parsed = runProvider(command, findings, Number.isFinite(store.deadline.at) ? timeout / 2 : timeout);
  } catch (err) {
    store.log.warn(`${(err as Error).message}; findings are linked by their words only`);
    return links;
  }
  for (const f of findings) {
    const vector = parsed.vectors.get(f.id);
    if (!vector) continue;
    let best: { id: string; score: number } | undefined;
    for (const c of candidates) {
      const other = cached.get(embeddingKey(command, c.text));
      if (!other || other.length !== vector.length) continue;
      const score = cosine(vector, other);
      if (score >= EMBEDDING_LINK_MIN && (!best || score > best.score || (score === best.score && c.id < best.id)))
        best = { id: c.id, score };
    }
    if (best) links.set(f.id, best.id);
  }
  return links;
}
