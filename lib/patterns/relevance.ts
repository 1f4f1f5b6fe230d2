import type { Database } from '../store/db.js';
import type { Store } from '../store/store.js';
import { listPatterns } from './queries.js';
import { ftsQuery } from '../store/fts.js';
import { cosine, embeddingKey, embedQuery, readVectors, providerTimeout } from './embeddings.js';
import { patternDb } from '../events/log.js';

// How relevant each candidate pattern is to a query, 0..1 (SPEC §3.4): cosine similarity of
// embeddings where the pattern has a cached vector and a provider embeds the query, else the
// FTS5 BM25 match of the query against the pattern text.

/** BM25 relevance of this project's non-deprecated patterns of `roles`, scaled so the best match is 1; non-matches are absent (0); undefined when nothing matches. */
export function bm25Relevance(db: Database, project: string, roles: string[], query: string): Map<string, number> | undefined {
  const match = ftsQuery(query);
  if (match === undefined) return undefined;
  const rows = db
    .prepare(
      `SELECT patterns_fts.pid AS id, -bm25(patterns_fts) AS score
       FROM patterns_fts JOIN patterns ON patterns.project = patterns_fts.project AND patterns.id = patterns_fts.pid
       WHERE patterns_fts MATCH ? AND patterns_fts.project = ? AND patterns.lifecycle != 'deprecated'
         AND patterns.role IN (${roles.map(() => '?').join(', ')})`,
    )
    .all(match, project, ...roles) as { id: string; score: number }[];
  if (rows.length === 0) return undefined; // a query that matches nothing is no signal: keep the plain score
  const best = Math.max(0, ...rows.map((r) => r.score));
  return new Map(rows.map((r) => [r.id, best > 0 ? Math.max(0, r.score) / best : 1]));
}

/**
 * Cosine relevance for the candidates that have a cached vector, or undefined when there is no
 * provider, no cached vector, or the provider fails on the query (warned: relevance falls back to BM25).
 */
export function embeddingRelevance(store: Store, query: string, roles: string[]): Map<string, number> | undefined {
  const command = store.config.embeddings.command?.trim();
  if (!command || !query.trim()) return undefined;
  const patterns = listPatterns(patternDb(store), store.project, { roles });
  const cached = readVectors(patternDb(store), patterns.map((p) => embeddingKey(command, p.text)));
  if (cached.size === 0) return undefined; // nothing to compare with: spare the provider call
  let queryVector: Float32Array;
  try {
    // Half the time left at most, so the fallback still has time to finish within the deadline.
    const remaining = providerTimeout(store.deadline);
    queryVector = embedQuery(command, query, Number.isFinite(store.deadline.at) ? remaining / 2 : remaining);
  } catch (err) {
    store.log.warn(`${(err as Error).message}; using BM25 relevance`);
    return undefined;
  }
  const out = new Map<string, number>();
  let mismatched = 0;
  for (const p of patterns) {
    const vector = cached.get(embeddingKey(command, p.text));
    if (!vector) continue;
    if (vector.length !== queryVector.length) {
      mismatched++;
      continue;
    }
    out.set(p.id, Math.min(1, Math.max(0, cosine(queryVector, vector))));
  }
  if (mismatched) {
    store.log.warn(`${mismatched} cached vectors differ in dimension from the query's ${queryVector.length}; using BM25 for those patterns`);
  }
  return out;
}

/** Relevance of every candidate pattern to the query, or undefined when the query gives no signal. */
export function relevanceFor(store: Store, query: string, roles: string[]): Map<string, number> | undefined {
  const lexical = bm25Relevance(patternDb(store), store.project, roles, query);
  const semantic = embeddingRelevance(store, query, roles);
  if (!semantic?.size) return lexical;
  const merged = new Map(lexical ?? []);
  for (const [id, similarity] of semantic) merged.set(id, similarity);
  return merged;
}
