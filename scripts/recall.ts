import type { Command } from '../lib/cli/runner.js';
import { operandText, optionalInt, optionalString } from '../lib/cli/flags.js';
import { CairnError } from '../lib/core/errors.js';
import { KNOWLEDGE_TYPES } from '../lib/knowledge/entry.js';
import { knowledgeDb, knowledgeStats, recentKnowledge, searchKnowledge, type Source } from '../lib/knowledge/index.js';
import { recallTerms } from '../lib/knowledge/search.js';
import { formatHits, formatStats } from '../lib/knowledge/recall.js';
import { shownBead, shownContent, shownKey, shownTags, shownType } from '../lib/knowledge/render.js';

export const command: Command = {
  name: 'recall',
  usage: `usage: cairn recall "query" [--type T] [--all] [--limit N] [--json]
       cairn recall --recent N [--type T] [--all] [--json]
       cairn recall --stats [--json]

Searches the knowledge log (SPEC §4.5): FTS5 with porter stemming, BM25 with positive weights
(content, tags, type, key), shell residue and needs_review entries ranked lower, canonical ones
first in a near-tie, superseded ones hidden. Each hit prints as [TYPE] content, then
"  bead: X | tags"; lines of multi-line content are indented by four spaces. The log is a committed
file anyone may edit: content is sanitised and its secrets redacted, a type outside the seven shows
as OTHER, and only tags that are words are shown.

  --type T     only entries of type T (learned, decision, fact, pattern, investigation, deviation,
               must-check), filtered inside the search
  --all        also the archive (knowledge.archive.jsonl) and superseded entries
  --limit N    at most N hits (10)
  --recent N   the N newest entries instead of a search
  --stats      totals, archived, by type, top tags
  --json       {"terms":[…],"hits":[{key,type,content,bead,tags,ts,status,archived,score}]} (or the stats)

example:
  cairn recall "oauth redirect" --type learned
`,
  flags: { string: ['type', 'limit', 'recent'], boolean: ['all', 'stats'] },
  operands: true,
  deadlineMs: 0,
  person: true,
  run(ctx) {
    const store = ctx.store();
    const all = Boolean(ctx.args.all);
    const sources: Source[] = all ? ['log', 'archive'] : ['log'];
    if (ctx.args.stats) {
      const stats = knowledgeStats(knowledgeDb(store, ['log', 'archive']), store.project);
      if (ctx.args.json) ctx.json(stats);
      else ctx.print(formatStats(stats));
      return;
    }
    const type = optionalString(ctx.args, 'type')?.toLowerCase();
    if (type !== undefined && !(KNOWLEDGE_TYPES as readonly string[]).includes(type))
      throw new CairnError('usage', `--type must be one of ${KNOWLEDGE_TYPES.join(', ')}`);
    const recent = optionalInt(ctx.args, 'recent', 1);
    const query = operandText(ctx.args);
    if (recent === undefined && !query) throw new CairnError('usage', 'give a query, --recent N or --stats (see --help)');
    const q = { project: store.project, sources, type, withSuperseded: all };
    const db = knowledgeDb(store, sources);
    const terms = recent === undefined ? recallTerms(query) : [];
    const hits =
      recent !== undefined
        ? recentKnowledge(db, { ...q, limit: recent })
        : searchKnowledge(db, { ...q, terms, limit: optionalInt(ctx.args, 'limit', 1) ?? 10 });
    if (!ctx.args.json) {
      ctx.print(formatHits(hits));
      if (!hits.length)
        ctx.log.info(
          terms.length || recent !== undefined ? 'no entries found' : `nothing to search for in '${query}' (only short or common words)`,
        );
      return;
    }
    const shown = hits.map((h) => ({
      key: shownKey(h.key),
      type: shownType(h.type),
      content: shownContent(h.content),
      bead: shownBead(h.bead) ?? '',
      tags: shownTags(h.tags),
      ts: new Date(h.ts * 1000).toISOString(),
      status: h.status,
      archived: h.archived,
      score: h.score,
    }));
    ctx.json({ terms, hits: shown });
  },
};
