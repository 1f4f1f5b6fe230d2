import { clip, hangingIndent, shownBead, shownContent, shownTags, shownType } from './render.js';
import type { KnowledgeHit, KnowledgeStats } from './index.js';

// Content indented four spaces: no line passes for a bead line or another hit (SPEC §4.5).

export function formatHits(hits: KnowledgeHit[]): string {
  return hits.map(formatHit).join('\n\n') + (hits.length ? '\n' : '');
}

function formatHit(hit: KnowledgeHit): string {
  const lines = hangingIndent(`[${shownType(hit.type).toUpperCase()}] `, shownContent(hit.content), '    ');
  const meta = [`bead: ${shownBead(hit.bead) ?? '-'}`, shownTags(hit.tags.filter((t) => t !== hit.type)).join(', ') || '-'];
  if (hit.status) meta.push(hit.status);
  if (hit.archived) meta.push('archived');
  return [...lines, `  ${meta.join(' | ')}`].join('\n');
}

export function formatStats(s: KnowledgeStats): string {
  const lines = [`entries: ${s.total} (${s.archived} archived)`, '', 'by type:'];
  for (const [type, n] of Object.entries(s.byType).sort((a, b) => b[1] - a[1])) lines.push(`  ${type.padEnd(14)} ${n}`);
  lines.push('', 'top tags:');
  for (const t of s.topTags) lines.push(`  ${clip(t.tag, 24).padEnd(14)} ${t.count}`);
  return lines.join('\n') + '\n';
}
