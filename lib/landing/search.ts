import { sanitizeUntrusted } from '../core/sanitize.js';
import { words } from '../core/text.js';
import { queryTerms } from '../store/fts.js';
import { projectLandings, type LandingPattern } from './library.js';

// BM25F over title, tags, summary, prompt and paths (SPEC §5), in memory: the log is small, no database for a hook.

const FIELD_WEIGHTS: [(p: LandingPattern) => string, number][] = [
  [(p) => p.title, 3],
  [(p) => p.tags.join(' '), 2],
  [(p) => p.summary, 1],
  [(p) => p.prompt ?? '', 1],
  [(p) => p.examplePaths.join(' '), 1],
];
const K1 = 1.2;
const B = 0.75;

export interface RankedPattern {
  pattern: LandingPattern;
  score: number;
}

/** "endpoints" finds "endpoint". */
function fold(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return word.slice(0, -3) + 'y';
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** Ties: most recently updated first; none for an empty query. */
export function searchPatterns(entries: LandingPattern[], query: string, limit: number): RankedPattern[] {
  const terms = [...new Set(queryTerms(query).map(fold))];
  if (terms.length === 0 || entries.length === 0) return [];
  const docs = entries.map((pattern) => {
    const tf = new Map<string, number>();
    let length = 0;
    for (const [field, weight] of FIELD_WEIGHTS) {
      for (const w of words(field(pattern))) {
        const t = fold(w);
        tf.set(t, (tf.get(t) ?? 0) + weight);
        length += weight;
      }
    }
    return { pattern, tf, length };
  });
  const avgLength = docs.reduce((sum, d) => sum + d.length, 0) / docs.length || 1;
  const idf = new Map(
    terms.map((t) => [
      t,
      Math.log(1 + (docs.length - docs.filter((d) => d.tf.has(t)).length + 0.5) / (docs.filter((d) => d.tf.has(t)).length + 0.5)),
    ]),
  );
  return docs
    .map(({ pattern, tf, length }) => ({
      pattern,
      score: terms.reduce((sum, t) => {
        const f = tf.get(t) ?? 0;
        return f === 0 ? sum : sum + idf.get(t)! * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * length) / avgLength)));
      }, 0),
    }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || compareRecent(a.pattern, b.pattern))
    .slice(0, limit);
}

export function compareRecent(a: LandingPattern, b: LandingPattern): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Sanitised: it is shown to an agent. */
function patternLine(p: LandingPattern): string {
  const title = p.title.length > 160 ? `${p.title.slice(0, 159)}…` : p.title;
  const files = p.examplePaths.length > 4 ? `${p.examplePaths.slice(0, 4).join(', ')}, …` : p.examplePaths.join(', ');
  const parts = [`Pattern: ${title}`, files && `files: ${files}`, p.commands.length > 0 && `run: ${p.commands.slice(0, 3).join('; ')}`];
  return sanitizeUntrusted(parts.filter(Boolean).join(' — '), { singleLine: true });
}

/** For auto-recall and `format-patterns --query` (SPEC §4.4, §5); [] when the landings cannot be read (doctor says). */
export function landingPatternLines(storeDir: string, project: string, query: string, limit = 3): string[] {
  let entries: LandingPattern[];
  try {
    entries = projectLandings(storeDir, project);
  } catch {
    return [];
  }
  return searchPatterns(entries, query, limit).map((r) => patternLine(r.pattern));
}
