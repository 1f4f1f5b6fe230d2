import { redactSecrets } from './secrets.js';

// The one sanitiser (SPEC §4.6), in and out: the invisible, role imitations and fences go, then secrets.

export type Removal = 'bidi' | 'invisible' | 'control' | 'escape-sequence' | 'role-marker' | 'fence' | 'secret';

export interface SanitizeOptions {
  singleLine?: boolean;
}

export interface Sanitized {
  text: string;
  removed: Removal[];
}

const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;
const INVISIBLE = /[\u00AD\u180E\u200B-\u200D\u2060-\u2064\uFEFF\u{E0000}-\u{E007F}]/gu;
const ESCAPE_SEQUENCE =
  /\u001B(?:\[[0-?]*[ -/]*[@-~]?|\][^\u0007\u001B]*(?:\u0007|\u001B\\)?|[PX^_][^\u001B]*(?:\u001B\\)?|[@-Z\\-_])|\u009B[0-?]*[ -/]*[@-~]?/g;
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;
const LINE_SEPARATORS = /[\u2028\u2029]/g;

// Markers are found in a "skeleton": NFKC per code point, Cyrillic/Greek look-alikes folded to Latin.
const ROLE_WORDS = 'system|assistant|user|human|developer';
const MARKERS: { kind: Removal; pattern: RegExp }[] = [
  {
    kind: 'role-marker',
    pattern: /<\|\s*\/?[a-z_][a-z0-9_]{0,31}\s*\|>|\[\s*\/?\s*inst\s*\]|<\s*\/?\s*s\s*>|<<\s*\/?\s*sys\s*>>/giu,
  },
  {
    kind: 'role-marker',
    pattern: new RegExp(`\\[\\s*(?:${ROLE_WORDS})\\s*\\]|<\\s*\\/?\\s*(?:${ROLE_WORDS})\\s*>`, 'giu'),
  },
  { kind: 'role-marker', pattern: new RegExp(`(?<![\\p{L}\\p{N}_])(?:${ROLE_WORDS.toUpperCase()})\\s*:`, 'gu') },
  // `System:` where a speaker label stands ("file system: ext4" keeps its word)
  {
    kind: 'role-marker',
    pattern: new RegExp(`(?=(?:${ROLE_WORDS})\\s*:)(?<=^|[\\n.!?;:>)\\]("'“”‘’«»\`*#|+•·‣◦▪—–-]\\s*|^\\s+)(?:${ROLE_WORDS})\\s*:`, 'giu'),
  },
  { kind: 'role-marker', pattern: /#{1,6}\s*(?:instruction|response|system)\s*:/giu },
  // cairn's own fences (SPEC §4.4, §3.5)
  { kind: 'fence', pattern: /<\s*\/?\s*untrusted-knowledge\b[^>\n]*>?/giu },
  { kind: 'fence', pattern: /(?<!=)={2,}\s*(?:end\s+)?historical\s+patterns\b[^=\n]*(?:={2,})?/giu },
];

const LOOK_ALIKES: Record<string, string> = {
  а: 'a',
  в: 'b',
  с: 'c',
  е: 'e',
  һ: 'h',
  і: 'i',
  ј: 'j',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  ѕ: 's',
  т: 't',
  у: 'y',
  х: 'x',
  ԁ: 'd',
  ӏ: 'l',
  А: 'A',
  В: 'B',
  С: 'C',
  Е: 'E',
  Н: 'H',
  І: 'I',
  Ј: 'J',
  К: 'K',
  М: 'M',
  О: 'O',
  Р: 'P',
  Ѕ: 'S',
  Т: 'T',
  Х: 'X',
  Ү: 'Y',
  У: 'Y',
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
};

const NON_ASCII = /[^\u0000-\u007f]/;

/** With each character's original span. */
function skeleton(text: string): { text: string; start: (at: number) => number; end: (at: number) => number } {
  if (!NON_ASCII.test(text)) return { text, start: (at) => at, end: (at) => at + 1 };
  let out = '';
  const start: number[] = [];
  const end: number[] = [];
  let i = 0;
  for (const ch of text) {
    const folded = ch < '\u0080' ? ch : (LOOK_ALIKES[ch] ?? ch.normalize('NFKC'));
    for (let k = 0; k < folded.length; k++) {
      start.push(i);
      end.push(i + ch.length);
    }
    out += folded;
    i += ch.length;
  }
  return { text: out, start: (at) => start[at], end: (at) => end[at] };
}

// most skeletons hold none of these: no scans
const MAY_HOLD_MARKER = new RegExp(
  `${ROLE_WORDS}|inst|sys|<\\s*\\/?\\s*s\\s*>|<\\||untrusted-knowledge|historical|instruction|response`,
  'iu',
);

function removeMarkers(text: string, removed: Set<Removal>): string {
  const sk = skeleton(text);
  if (!MAY_HOLD_MARKER.test(sk.text)) return text;
  const spans: [number, number][] = [];
  for (const { kind, pattern } of MARKERS) {
    pattern.lastIndex = 0;
    for (const m of sk.text.matchAll(pattern)) {
      if (m[0].length === 0) continue;
      spans.push([sk.start(m.index!), sk.end(m.index! + m[0].length - 1)]);
      removed.add(kind);
    }
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0]);
  // joined once: reading back from a `+=` string flattens it at every marker (quadratic)
  const kept: string[] = [];
  let last = '';
  let at = 0;
  for (const [from, to] of spans) {
    if (to <= at) continue;
    if (from > at) {
      kept.push(text.slice(at, from));
      last = text[from - 1];
    }
    at = to;
    // the marker's trailing space goes too, unless it is the only space between two words
    if (last === '' || /\s/.test(last)) while (text[at] === ' ' || text[at] === '\t') at++;
  }
  kept.push(text.slice(at));
  return kept.join('');
}

const ORDER: Removal[] = ['bidi', 'invisible', 'escape-sequence', 'control', 'role-marker', 'fence', 'secret'];

/** Idempotent: a second pass changes nothing. */
export function sanitizeReport(input: string, opts: SanitizeOptions = {}): Sanitized {
  const removed = new Set<Removal>();
  const strip = (text: string, pattern: RegExp, kind: Removal, by = '') =>
    text.replace(pattern, () => {
      removed.add(kind);
      return by;
    });
  let text = String(input);
  text = strip(text, BIDI, 'bidi');
  text = strip(text, INVISIBLE, 'invisible');
  text = strip(text, ESCAPE_SEQUENCE, 'escape-sequence');
  text = strip(text.replace(/\r\n/g, '\n'), CONTROL, 'control');
  text = text.replace(LINE_SEPARATORS, '\n');
  // one removal can join another marker's pieces (`SYS<s>TEM:`): repeat
  for (let pass = 0; pass < 8; pass++) {
    const next = removeMarkers(text, removed);
    if (next === text) break;
    text = next;
  }
  // from the start of each trailing run: from inside it, a long run is rescanned
  text = opts.singleLine ? text.replace(/\s+/g, ' ').trim() : text.replace(/(?<![ \t])[ \t]+$/gm, '').trim();
  // last: a secret a marker or invisible character split is whole again
  const redacted = redactSecrets(text);
  if (redacted.kinds.length > 0) removed.add('secret');
  return { text: redacted.text, removed: ORDER.filter((k) => removed.has(k)) };
}

export function sanitizeUntrusted(text: string, opts: SanitizeOptions = {}): string {
  return sanitizeReport(text, opts).text;
}
