#!/usr/bin/env node
// Retrieval quality of knowledge search (issue 9; SPEC §4.3): a labelled query set over the real Lavra
// log (fixtures/knowledge/recall-queries.json, relevant keys judged by reading the entries) run
// through three rankings over the same index and the same FTS5 MATCH expression:
//   ours      — searchKnowledge: BM25 (content 10, tags 5, type 2, key 1) × shell-residue and curation
//               factors, newer first at equal score (what cairn recall uses); for a query given as a
//               session context (prompt, bead titles, branch) searchTopics, what auto-recall uses: each
//               topic searched on its own in auto-recall's working set (the newest lines), the rankings
//               fused;
//   plain     — FTS5 BM25 with the same positive weights and nothing else;
//   negative  — the system we replace: the same weights negated, which inverts BM25's order.
// Prints nDCG@10 (graded gains 2^g − 1), MRR and recall@10 per ranking as a markdown table; --verbose
// adds one row per query. A quality measure, not a speed one: it is fine to run anywhere.
//
//   npm run build && npm run bench:recall [-- --verbose]

import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(join(REPO, 'dist', 'lib', p));
const { Store } = await dist('store/store.js');
const { locate } = await dist('store/root.js');
const { Deadline } = await dist('core/deadline.js');
const { createLogger } = await dist('core/logger.js');
const { ftsMatch } = await dist('store/fts.js');
const { knowledgeDb, searchKnowledge, BM25_WEIGHTS } = await dist('knowledge/index.js');
const { recallTerms, contextTopics, searchTopics } = await dist('knowledge/search.js');
const { contextText } = await dist('knowledge/context.js');

const verbose = process.argv.includes('--verbose');
const labels = JSON.parse(readFileSync(join(REPO, 'fixtures', 'knowledge', 'recall-queries.json'), 'utf8'));
const K = 10;

const root = mkdtempSync(join(tmpdir(), 'cairn-recall-quality-'));
try {
  mkdirSync(join(root, '.git'));
  mkdirSync(join(root, '.cairn', 'memory'), { recursive: true });
  copyFileSync(join(REPO, 'fixtures', 'knowledge', labels.log), join(root, '.cairn', 'memory', 'knowledge.jsonl'));
  const store = new Store(locate({ root, project: 'quality' }), new Deadline(0), createLogger('bench', true), true);
  const db = knowledgeDb(store, ['log'], { newest: true }); // with auto-recall's working set, which it searches

  const plainSql = (weights) =>
    db.prepare(
      `SELECT k.key FROM knowledge_fts JOIN knowledge k ON k.id = knowledge_fts.rowid
       WHERE knowledge_fts MATCH ? ORDER BY bm25(knowledge_fts, ${weights.join(', ')}) LIMIT ${K}`,
    );
  const plain = plainSql(BM25_WEIGHTS);
  const negative = plainSql(BM25_WEIGHTS.map((w) => -w));
  const scope = { project: store.project, sources: ['log'] };
  const rankings = {
    ours: (terms, context) =>
      (context
        ? searchTopics(db, { ...scope, newest: true }, contextTopics(context), K).hits
        : searchKnowledge(db, { ...scope, terms, limit: K })
      ).map((h) => h.key),
    plain: (terms) => plain.all(ftsMatch(terms)).map((r) => r.key),
    negative: (terms) => negative.all(ftsMatch(terms)).map((r) => r.key),
  };

  const totals = Object.fromEntries(Object.keys(rankings).map((n) => [n, { ndcg: 0, mrr: 0, recall: 0 }]));
  const rows = [];
  for (const q of labels.queries) {
    const context = q.context && {
      prompt: q.context.prompt ?? null,
      beadTitles: q.context.beads ?? [],
      branch: q.context.branch,
      changedFiles: [],
    };
    const terms = recallTerms(context ? contextText(context) : q.query);
    const row = [q.id];
    for (const [name, rank] of Object.entries(rankings)) {
      const m = metrics(rank(terms, context), q.relevant);
      totals[name].ndcg += m.ndcg;
      totals[name].mrr += m.mrr;
      totals[name].recall += m.recall;
      row.push(m.ndcg.toFixed(2));
    }
    rows.push(row);
  }
  const n = labels.queries.length;
  const out = [];
  out.push(`Retrieval quality on ${labels.log} (${n} labelled queries, top ${K})`, '');
  out.push('| ranking | nDCG@10 | MRR | recall@10 |', '|---|---|---|---|');
  for (const [name, t] of Object.entries(totals))
    out.push(`| ${name} | ${(t.ndcg / n).toFixed(3)} | ${(t.mrr / n).toFixed(3)} | ${(t.recall / n).toFixed(3)} |`);
  if (verbose) {
    out.push(
      '',
      `| query | ${Object.keys(rankings)
        .map((r) => `${r} nDCG`)
        .join(' | ')} |`,
      `|---|${Object.keys(rankings)
        .map(() => '---')
        .join('|')}|`,
    );
    for (const r of rows) out.push(`| ${r.join(' | ')} |`);
  }
  process.stdout.write(out.join('\n') + '\n');
  store.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}

/** nDCG@K with gains 2^g − 1, reciprocal rank of the first relevant key, share of relevant keys in the top K. */
function metrics(ranked, relevant) {
  const gain = (key) => 2 ** (relevant[key] ?? 0) - 1;
  const dcg = ranked.slice(0, K).reduce((sum, key, i) => sum + gain(key) / Math.log2(i + 2), 0);
  const ideal = Object.values(relevant)
    .sort((a, b) => b - a)
    .slice(0, K)
    .reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
  const first = ranked.findIndex((key) => relevant[key] !== undefined);
  const found = ranked.slice(0, K).filter((key) => relevant[key] !== undefined).length;
  return {
    ndcg: ideal ? dcg / ideal : 0,
    mrr: first < 0 ? 0 : 1 / (first + 1),
    recall: found / Object.keys(relevant).length,
  };
}
