import { sanitizeUntrusted } from '../core/sanitize.js';
import { redactSecrets } from '../core/secrets.js';

// How an entry's text is shown (SPEC §4.4, §4.5, §4.6): sanitised and redacted again on the way
// out — the log is a committed file anyone may have edited — and multi-line content indented under
// its first line, so no line of it can pass for a new entry or for the fence.

/** An entry's content as it may be shown to an agent or a person. */
export function shownContent(content: string): string {
  return redactSecrets(sanitizeUntrusted(content)).text;
}

/** At most `max` characters, cut with an ellipsis. */
export function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max - 1).join('').trimEnd() + '…';
}

/** The first line as given, the others indented by `indent`; blank lines dropped. */
export function hangingIndent(first: string, text: string, indent: string): string[] {
  const [head = '', ...rest] = text.split('\n').filter((l) => l.trim() !== '');
  return [first + head, ...rest.map((l) => indent + l)];
}

/** A bead id worth showing; shell residue stored as a bead by old capture bugs is not. */
export function shownBead(bead: string): string | undefined {
  return /^[\w.:-]{1,64}$/.test(bead) ? bead : undefined;
}
