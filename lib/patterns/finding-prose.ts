import { stripMarkdown } from '../core/text.js';
import { withoutVerdictBlocks, type Finding } from './verdict.js';
import { summaryWithoutCitations } from './link.js';

// What a deliberation's prose says about one finding by id (SPEC §3.7, §3.9.2). Pure.

const escapeRegExp = (id: string) => id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A1, not A10. */
function namesId(id: string): RegExp {
  return new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(id)}([^A-Za-z0-9_]|$)`, 'i');
}

function withoutId(line: string, id: string): string {
  return stripMarkdown(line)
    .replace(new RegExp(escapeRegExp(id), 'gi'), ' ')
    .replace(/^[\s\-*+>#:|.)(\d—–]+/, '')
    .trim();
}

/** For a judged id that names no finding. */
export function findingNamedByLine(id: string, adversarialText: string): Finding | undefined {
  const names = namesId(id);
  const line = adversarialText.split('\n').find((l) => names.test(l) && !/verdict-json/.test(l));
  if (!line) return undefined;
  const summary = withoutId(line, id);
  return summary ? { id, summary } : undefined;
}

const REASON_CHARS = 600;

/** Outside verdict blocks, by paragraph or section; where others are named too, only the sentences naming this one. */
export function validatorReason(id: string, validatorText: string, otherIds: string[] = []): string {
  const names = namesId(id);
  const others = otherIds.filter((o) => o.toLowerCase() !== id.toLowerCase()).map(namesId);
  const paragraphs = proseParagraphs(withoutVerdictBlocks(validatorText));
  const words: string[] = [];
  paragraphs.forEach((paragraph, i) => {
    if (!names.test(paragraph)) return;
    if (HEADING.test(paragraph)) {
      const end = paragraphs.findIndex((p, j) => j > i && HEADING.test(p));
      words.push(...paragraphs.slice(i, end < 0 ? undefined : end).map((p) => withoutId(p.replace(/\s+/g, ' '), id)));
      return;
    }
    const about = others.some((o) => o.test(paragraph))
      ? paragraph.split(/(?<=[.!?;])\s+/).filter((sentence) => names.test(sentence))
      : [paragraph];
    words.push(...about.map((text) => withoutId(text.replace(/\s+/g, ' '), id)));
  });
  return summaryWithoutCitations(words.join(' ')).slice(0, REASON_CHARS);
}

const HEADING = /^ {0,3}#{1,6}\s/;

const LIST_ITEM = /^ {0,3}([-*+]|\d{1,3}[.)])\s/;

/** A heading line is one of its own, and so is each list item. */
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
