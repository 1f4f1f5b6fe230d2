import { sha256 } from './crypto.js';

export { sha256 };

/** 16 hex characters of sha256: short enough to read, wide enough not to collide in practice. */
export function shortHash(text: string): string {
  return sha256(text).slice(0, 16);
}

/**
 * Remove inline markdown so `**Never** use \`eval\`` and `Never use eval` are the same text. Code spans keep their
 * content as written.
 */
export function stripMarkdown(text: string): string {
  return text
    .split(/(`+[^`]*`+)/)
    .map((part, i) => (i % 2 === 1 ? part.replace(/^`+|`+$/g, '') : stripEmphasis(part)))
    .join('');
}

function stripEmphasis(text: string): string {
  return (
    text
      // links and images keep their label; neither part holds its own brackets, so a run of `[` or `[x](`
      // is scanned once, not once from every bracket (SPEC §4.6: linear in the text)
      .replace(/!?\[([^[\]]*)\]\([^()]*\)/g, '$1')
      .replace(/(\*\*|__)(.+?)\1/g, '$2')
      .replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/g, '$1$2')
      .replace(/~~(.+?)~~/g, '$1')
  );
}

export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The form two texts are compared in: NFKC, lower case, markdown and edge punctuation removed. */
export function normaliseText(text: string): string {
  return collapseWhitespace(stripMarkdown(text.normalize('NFKC')).toLowerCase())
    .replace(/^[\s\-–—:;,.]+/, '')
    .replace(/(?<![\s.;:,!])[\s.;:,!]+$/, ''); // from where the run starts: from inside it, each start scanned it again
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-case word tokens of a text. */
export function words(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
}

// Function words carry no meaning for matching a finding to a pattern.
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

/**
 * A light English suffix stemmer, so that the words a finding uses meet the words of the rule it
 * applies: documented / documentation / documents → document, retries / retried → retry,
 * concatenating / concatenation → concaten. Stems of two words are compared, never shown.
 */
export function stem(word: string): string {
  let stemmed = stemCache.get(word);
  if (stemmed === undefined) {
    stemmed = stemWord(word);
    if (stemCache.size >= STEMS_CACHED) stemCache.clear();
    stemCache.set(word, stemmed);
  }
  return stemmed;
}

// A replay stems every word of 100k patterns, and a vocabulary repeats: each word is stemmed once (bounded).
const STEMS_CACHED = 50_000;
const stemCache = new Map<string, string>();

function stemWord(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word;
  // plurals and third persons
  if (w.endsWith('ies')) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  // one derivational or inflectional ending
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

// A chunk of text that is code rather than prose: a path, a file name, snake_case, camelCase, a
// call, a flag, a header name. Its words are identifiers (SPEC §3.9.1: they weigh more). A chunk starts
// where a run of its characters does: a run of punctuation was otherwise scanned from each of its characters.
const CHUNK = /(?<![\p{L}\p{N}_$@./:#-])[\p{L}\p{N}_$@./:#-]*[\p{L}\p{N}]/gu;
const PLAIN_WORD = /^[a-z0-9]+$/;
const CAPITALISED_WORD = /^[A-Z0-9]*[a-z0-9]*$/;
const CODE_LIKE = /[\p{L}\p{N}][_./:#][\p{L}\p{N}]|\p{Ll}\p{Lu}|^--?\p{L}|^[\p{Lu}\p{N}_]{2,}$/u;

/**
 * The content terms of a text: stop-words dropped, stemmed, each flagged when it comes from an
 * identifier (a code-like chunk, or anything in backticks). camelCase and snake_case split into
 * their words, so `dueDate` and `due_date` meet. The map is shared (cached): read it, never change it.
 */
export function contentTerms(text: string): Map<string, boolean> {
  const known = termsCache.get(text);
  if (known) return known;
  const terms = new Map<string, boolean>();
  const add = (chunk: string, identifier: boolean) => {
    // most chunks are one plain lower-case word: already what words() would make of them; a
    // capitalised one (The, SQL) is one word in lower case (no camelCase to split, ASCII is NFKC)
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
    for (const m of part.matchAll(CHUNK))
      add(m[0], part.startsWith('()', m.index + m[0].length) || CODE_LIKE.test(m[0]));
  });
  if (termsCache.size >= TERMS_CACHED) termsCache.clear();
  termsCache.set(text, terms);
  return terms;
}

// The same pattern texts are compared with every finding of a run: their terms are kept (bounded).
const TERMS_CACHED = 5000;
const termsCache = new Map<string, Map<string, boolean>>();

/** The longest prefix of `text` that is at most `maxBytes` in UTF-8, cut at a character boundary. */
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

/**
 * The terms a pattern is indexed under and compared by: the stems of its words but the stop-words,
 * and its content terms (identifiers split into their words). Two wordings of one rule share most of
 * them whatever function words they use (SPEC §3.10.4); `length` is how many there are (what
 * near-duplicate sizes and BM25 count).
 */
export function indexTerms(text: string): { terms: string[]; length: number } {
  const terms = new Set<string>();
  for (const w of new Set(words(text))) if (!STOP_WORDS.has(w)) terms.add(stem(w));
  // In ASCII without camelCase, every content term is the stem of one of those words (a replay of
  // 100k patterns spent a third of this function on contentTerms, which adds nothing there).
  if (!ASCII.test(text) || CAMEL_CASE.test(text)) for (const t of contentTerms(text).keys()) terms.add(t);
  return { terms: [...terms], length: terms.size };
}

const ASCII = /^[\x00-\x7f]*$/;
const CAMEL_CASE = /[a-z][A-Z]/;

// An identifier names one thing: a path or file, a dotted or hyphenated name, a version, a number, a
// code name with digits, snake_case, camelCase, a flag, anything in backticks. Capitals alone are
// emphasis (NEVER), not a name.
const IDENTIFIER_CHUNK = /[\p{L}\p{N}_$@.:#/-]*[\p{L}\p{N}]\/?/gu;
const NAME_LIKE = /\p{N}|[\p{L}\p{N}][_./:#-][\p{L}\p{N}]|\/$|\p{Ll}\p{Lu}|^--?\p{L}/u;

/**
 * The identifiers a text names, lower-cased as written (SPEC §3.10.4): `helper18`, `edge-lan`,
 * `docs/openapi.yaml`, `v2.3`, `billing/`, `11`. Two texts that name different ones are different
 * patterns however many words they share.
 */
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
