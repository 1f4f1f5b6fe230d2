import type { Store } from '../store/store.js';
import { listPatterns } from './queries.js';
import { bm25Relevance } from './index/index.js';
import { cosine, embeddingKey, embedQuery, readVectors, providerTimeout } from './embeddings.js';
import { patternDb } from '../events/log.js';

// Relevance to a query, 0..1 (SPEC §3.4): embeddings' cosine where a vector is cached, else BM25.

/** Undefined: none to give (BM25 then). */
export function embeddingRelevance(store: Store, query: string, roles: string[]): Map<string, number> | undefined {
  const command = store.config.embeddings.command?.trim();
  if (!command || !query.trim()) return undefined;
  const patterns = listPatterns(patternDb(store), store.project, { roles });
  const cached = readVectors(
    patternDb(store),
    patterns.map((p) => embeddingKey(command, p.text)),
  );
  if (cached.size === 0) return undefined; // spare the provider call
  let queryVector: Float32Array;
  try {
    // half the time left at most, so the fallback still finishes in time
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
    store.log.warn(
      `${mismatched} cached vectors differ in dimension from the query's ${queryVector.length}; ` + 'using BM25 for those patterns',
    );
  }
  return out;
}

/** Embeddings over BM25; undefined without (format-patterns ranks in SQLite then). */
export function embeddingRelevanceFor(store: Store, query: string, roles: string[]): Map<string, number> | undefined {
  const semantic = embeddingRelevance(store, query, roles);
  if (!semantic?.size) return undefined;
  const merged = new Map(bm25Relevance(patternDb(store), store.project, roles, query) ?? []);
  for (const [id, similarity] of semantic) merged.set(id, similarity);
  return merged;
}
