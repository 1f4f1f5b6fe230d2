import { stripMarkdown } from '../core/text.js';
import { withoutVerdictBlocks, type Finding } from './verdict.js';
import { summaryWithoutCitations } from './link.js';

// What a deliberation's prose says about one finding, named by its id (A2, J1): the line of an
// adversarial text that raises it when it has no verdict block, and the validator's reason for
// dismissing it (feedback-loop, SPEC §3.7, §3.9.2). Pure functions of the text.

const escapeRegExp = (id: string) => id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A line that names the id as a whole word (A1, not A10). */
function namesId(id: string): RegExp {
  return new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(id)}([^A-Za-z0-9_]|$)`, 'i');
}

/** A line without the id, its markdown and its leading list marks. */
function withoutId(line: string, id: string): string {
  return stripMarkdown(line)
    .replace(new RegExp(escapeRegExp(id), 'gi'), ' ')
    .replace(/^[\s\-*+>#:|.)(\d—–]+/, '')
    .trim();
}

/** A dismissed or kept id that names no finding: the line of the adversarial text that names it, as a finding. */
export function findingNamedByLine(id: string, adversarialText: string): Finding | undefined {
  const names = namesId(id);
  const line = adversarialText.split('\n').find((l) => names.test(l) && !/verdict-json/.test(l));
  if (!line) return undefined;
  const summary = withoutId(line, id);
  return summary ? { id, summary } : undefined;
}

/** At most this much of a validator's reason is read: a few sentences. */
const REASON_CHARS = 600;

/**
 * Why the validator dismissed a finding: its words about it, outside its verdict-json blocks — the
 * paragraph that names the id, or the section under a heading that does (`## J2 — false positive`);
 * of a paragraph that names other findings too, only the sentences naming this one. A validator
 * explains a false positive by what the project lacks or does instead ("ledgerly ships no man
 * page"), which often names the rule the finding applied in the rule's own words where the finding
 * named only the concrete file (docs/decisions.md, "Learning").
 */
export function validatorReason(id: string, validatorText: string, otherIds: string[] = []): string {
  const names = namesId(id);
  const others = otherIds.filter((o) => o.toLowerCase() !== id.toLowerCase()).map(namesId);
  const paragraphs = proseParagraphs(withoutVerdictBlocks(validatorText));
  const words: string[] = [];
  paragraphs.forEach((paragraph, i) => {
    if (!names.test(paragraph)) return;
    if (HEADING.test(paragraph)) {
      // the section under the heading, up to the next one
      const end = paragraphs.findIndex((p, j) => j > i && HEADING.test(p));
      words.push(...paragraphs.slice(i, end < 0 ? undefined : end).map((p) => withoutId(p.replace(/\s+/g, ' '), id)));
      return;
    }
    const about = others.some((o) => o.test(paragraph))
      ? paragraph.split(/(?<=[.!?;])\s+/).filter((sentence) => names.test(sentence))
      : [paragraph];
    words.push(...about.map((text) => withoutId(text.replace(/\s+/g, ' '), id)));
  });
  // summaryWithoutCitations collapses whitespace too
  return summaryWithoutCitations(words.join(' ')).slice(0, REASON_CHARS);
}

const HEADING = /^ {0,3}#{1,6}\s/;

const LIST_ITEM = /^ {0,3}([-*+]|\d{1,3}[.)])\s/;

/** A text's paragraphs (lines between blank lines); a heading line is one of its own, and so is each list item. */
function proseParagraphs(text: string): string[] {
  const paragraphs: string[] = [];
  let current: string[] = [];
  const close = () => {
    if (current.length) paragraphs.push(current.join('\n'));
    current = [];
  };
  for (const line of text.split('\n')) {
    if (!line.trim()) close();
    else if (HEADING.test(line)) {
      close();
      paragraphs.push(line);
    } else {
      if (LIST_ITEM.test(line)) close();
      current.push(line);
    }
  }
  close();
  return paragraphs;
}
