import { sha256 } from './crypto.js';

export { sha256 };

export function shortHash(text: string): string {
  return sha256(text).slice(0, 16);
}

/** Code spans keep their content. */
export function stripMarkdown(text: string): string {
  return text
    .split(/(`+[^`]*`+)/)
    .map((part, i) => (i % 2 === 1 ? part.replace(/^`+|`+$/g, '') : stripEmphasis(part)))
    .join('');
}

function stripEmphasis(text: string): string {
  return (
    text
      // no brackets inside either part: linear on a run of `[`
      .replace(/!?\[([^[\]]*)\]\([^()]*\)/g, '$1')
      .replace(/(\*\*|__)(.+?)\1/g, '$2')
      .replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/g, '$1$2')
      .replace(/~~(.+?)~~/g, '$1')
  );
}

export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** NFKC, lower case, markdown and edge punctuation removed. */
export function normaliseText(text: string): string {
  return collapseWhitespace(stripMarkdown(text.normalize('NFKC')).toLowerCase())
    .replace(/^[\s\-–—:;,.]+/, '')
    .replace(/(?<![\s.;:,!])[\s.;:,!]+$/, ''); // the look-behind scans a long run once
}

const WORD = /[\p{L}\p{N}]+/gu;

export function words(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
}

const STOP_WORDS = new Set(
  (
    'a an and are as at be been being but by can could did do does for from had has have he her his how i if in into ' +
    'is it its itself just me more most my no nor not of off on once only or other our out over own same she so some ' +
    'such than that the their them then there these they this those through to too under until up very was we were ' +
    'what when where which while who whom why will with would you your yours also any each few both all about above ' +
    'after again against before below between during further here should every must shall may might'
  ).split(' '),
);

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** Stems are compared, never shown. */
export function stem(word: string): string {
  let stemmed = stemCache.get(word);
  if (stemmed === undefined) {
    stemmed = stemWord(word);
    if (stemCache.size >= STEMS_CACHED) stemCache.clear();
    stemCache.set(word, stemmed);
  }
  return stemmed;
}

// a replay stems every word of every pattern
const STEMS_CACHED = 50_000;
const stemCache = new Map<string, string>();

function stemWord(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word;
  if (w.endsWith('ies')) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  for (const [suffix, replacement] of ENDINGS) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) {
      w = w.slice(0, -suffix.length) + replacement;
      break;
    }
  }
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  if (w.length > 3 && /([bdfglmnprt])\1$/.test(w)) w = w.slice(0, -1); // committed → commit
  if (w.length >= 6 && w.endsWith('at')) w = w.slice(0, -2); // validate, validation → valid
  if (w.endsWith('i')) w = w.slice(0, -1) + 'y'; // cookie, cookies → cooky
  return w;
}

const ENDINGS: [string, string][] = [
  ['ational', 'at'],
  ['ation', 'at'],
  ['ition', 'it'],
  ['ion', ''],
  ['ing', ''],
  ['ied', 'y'],
  ['ed', ''],
  ['er', ''],
  ['ly', ''],
];

// A code-like chunk (path, snake_case, camelCase, call, flag): identifiers (SPEC §3.9.1).
const CHUNK = /(?<![\p{L}\p{N}_$@./:#-])[\p{L}\p{N}_$@./:#-]*[\p{L}\p{N}]/gu;
const PLAIN_WORD = /^[a-z0-9]+$/;
const CAPITALISED_WORD = /^[A-Z0-9]*[a-z0-9]*$/;
const CODE_LIKE = /[\p{L}\p{N}][_./:#][\p{L}\p{N}]|\p{Ll}\p{Lu}|^--?\p{L}|^[\p{Lu}\p{N}_]{2,}$/u;

/** Stemmed, flagged when from an identifier; shared: never mutate. */
export function contentTerms(text: string): Map<string, boolean> {
  const known = termsCache.get(text);
  if (known) return known;
  const terms = new Map<string, boolean>();
  const add = (chunk: string, identifier: boolean) => {
    // a plain word is already what words() makes
    const split = PLAIN_WORD.test(chunk)
      ? [chunk]
      : CAPITALISED_WORD.test(chunk)
        ? [chunk.toLowerCase()]
        : words(chunk.replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2'));
    for (const w of split) {
      if (STOP_WORDS.has(w) || w.length < 2) continue;
      const t = stem(w);
      terms.set(t, (terms.get(t) ?? false) || identifier);
    }
  };
  const parts = text.normalize('NFKC').split(/`([^`]*)`/);
  parts.forEach((part, i) => {
    if (i % 2 === 1) return add(part, true);
    for (const m of part.matchAll(CHUNK)) add(m[0], part.startsWith('()', m.index + m[0].length) || CODE_LIKE.test(m[0]));
  });
  if (termsCache.size >= TERMS_CACHED) termsCache.clear();
  termsCache.set(text, terms);
  return terms;
}

const TERMS_CACHED = 5000;
const termsCache = new Map<string, Map<string, boolean>>();

export function capUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return text.slice(0, end);
}

/** SPEC §3.10.4; `length` is what BM25 counts. */
export function indexTerms(text: string): { terms: string[]; length: number } {
  const terms = new Set<string>();
  for (const w of new Set(words(text))) if (!STOP_WORDS.has(w)) terms.add(stem(w));
  // in ASCII without camelCase every content term is already one of these
  if (!ASCII.test(text) || CAMEL_CASE.test(text)) for (const t of contentTerms(text).keys()) terms.add(t);
  return { terms: [...terms], length: terms.size };
}

const ASCII = /^[\x00-\x7f]*$/;
const CAMEL_CASE = /[a-z][A-Z]/;

// An identifier names one thing; capitals alone are emphasis.
const IDENTIFIER_CHUNK = /[\p{L}\p{N}_$@.:#/-]*[\p{L}\p{N}]\/?/gu;
const NAME_LIKE = /\p{N}|[\p{L}\p{N}][_./:#-][\p{L}\p{N}]|\/$|\p{Ll}\p{Lu}|^--?\p{L}/u;

/** SPEC §3.10.4: texts naming different ones are different patterns. */
export function identifiers(text: string): Set<string> {
  const out = new Set<string>();
  const parts = text.normalize('NFKC').split(/`([^`]*)`/);
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      if (part.trim()) out.add(part.trim().toLowerCase());
      return;
    }
    for (const m of part.matchAll(IDENTIFIER_CHUNK)) if (NAME_LIKE.test(m[0])) out.add(m[0].toLowerCase());
  });
  return out;
}
