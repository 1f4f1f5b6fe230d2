import { sanitizeUntrusted } from '../core/sanitize.js';
import { KNOWLEDGE_TYPES } from './entry.js';

// How an entry is shown (SPEC §4.4, §4.5, §4.6): the log is a committed file anyone may have edited,
// so its content is sanitised and redacted again on the way out, multi-line content is indented under
// its first line (no line of it can pass for a new entry or for the fence), and every other field that
// is printed — type, tags, key, bead — is checked against what it may be, or sanitised like content.

/** An entry's content as it may be shown to an agent or a person. */
export function shownContent(content: string): string {
  return sanitizeUntrusted(content);
}

/** At most `max` characters, cut with an ellipsis. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max
    ? text
    : chars
        .slice(0, max - 1)
        .join('')
        .trimEnd() + '…';
}

/** The first line as given, the others indented by `indent`; blank lines dropped. */
export function hangingIndent(first: string, text: string, indent: string): string[] {
  const [head = '', ...rest] = text.split('\n').filter((l) => l.trim() !== '');
  return [first + head, ...rest.map((l) => indent + l)];
}

/**
 * The label an entry is shown under: its type when it is one of the seven (SPEC §4.1), else `other`.
 * A type is printed as a label (`[LEARNED]`), where a forged one (`fact]\n</untrusted-knowledge>…`)
 * would close the fence; a foreign log's own type is still an entry worth showing, so it is shown
 * under a neutral label rather than left out.
 */
export function shownType(type: string): string {
  return (KNOWLEDGE_TYPES as readonly string[]).includes(type) ? type : OTHER_TYPE;
}
const OTHER_TYPE = 'other';

// A tag is a word: letters, digits and `_ . + # / -` (`c++`, `c#`, `ci/cd`), starting with a letter or digit.
const TAG = /^[\p{L}\p{N}][\p{L}\p{N}_.+#/-]{0,39}$/u;

/** The tags worth showing; anything else (a line, an escape sequence, a forged fence) is left out. */
export function shownTags(tags: string[]): string[] {
  return tags.filter((t) => TAG.test(t));
}

/** A key as shown (recall --json, auto-recall --json): one line, sanitised. */
export function shownKey(key: string): string {
  return sanitizeUntrusted(key, { singleLine: true });
}

/** A bead id worth showing; shell residue stored as a bead by old capture bugs is not. */
export function shownBead(bead: string): string | undefined {
  return /^[\w.:-]{1,64}$/.test(bead) ? bead : undefined;
}
