// Secret redaction (SPEC §4.6): every text cairn keeps in a committed file or shows an agent may hold a
// credential someone pasted, so it is redacted before it is written and again before it is shown. Each
// rule replaces only the secret itself with `[REDACTED:<kind>]`, keeping the words around it (and the
// name of an assignment) readable. The text is untrusted: every rule runs in time linear in its length
// (a scan starts only where a secret can start, and no unbounded run is scanned again from inside it).

export interface Redaction {
  text: string;
  /** The kinds redacted, one per occurrence, in rule order (for the sanitiser's audit). */
  kinds: string[];
}

interface Rule {
  kind: string;
  pattern: RegExp;
  /** The replacement for one match; by default the whole match becomes the marker. */
  replace?: (match: string, ...groups: string[]) => string;
}

const marker = (kind: string) => `[REDACTED:${kind}]`;

// A value that names a secret instead of holding one: `$DB_PASSWORD`, `${TOKEN}`, `<password>`,
// `{{ secret }}`, `%s`, `%(pw)s`, `%PASSWORD%`, `***`, `xxxx`, `...`, or a placeholder word. A value
// that merely starts with `$` or `%` (`%Wia8…`) is a password.
const PLACEHOLDER = /^(?:\$(?:\{.*|[A-Z_][A-Z0-9_]*)|[<{].*|%(?:[sdif]|\(.*|\w+%)|\*+|[xX]+|\.+)$/;
// A member reference or a call, unquoted after a colon: code that names a value, not the value.
const CODE_REFERENCE = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\(.*)?$/;
const WORDS_IN_CAMEL_CASE = /^[A-Za-z][a-z]*(?:[A-Z][a-z]{2,})*$/;
const PLACEHOLDER_WORD = /^(?:null|none|nil|true|false|empty|redacted|required|optional|changeme|undefined)$/i;

/**
 * An assignment value that looks like a credential rather than prose: `password=hunter2` and
 * `password = "x1"` are, `secret: rotate it` and `?token= param` are not.
 */
function credentialValue(value: string, separator: string, quoted: boolean): boolean {
  if (value === '' || value.startsWith('[REDACTED')) return false;
  if (PLACEHOLDER.test(value) || PLACEHOLDER_WORD.test(value)) return false;
  if (quoted || /^:?=$/.test(separator)) return value.length >= 4;
  // `refreshToken: next.refreshToken`, `token: expect.any(String)`: code quoted in prose
  if (CODE_REFERENCE.test(value)) return false;
  // after a colon, or `= ` with a space, an unquoted value must look machine-made: long, with a digit
  // or symbol, or with capitals inside that are not words in camelCase (`RYayXcQvLmWp`, not
  // `refreshToken` or `Required`)
  if (value.length >= 16 || (value.length >= 6 && /[\d\W_]/.test(value))) return true;
  return value.length >= 8 && /[a-z]/.test(value) && /[A-Z]/.test(value.slice(1)) && !WORDS_IN_CAMEL_CASE.test(value);
}

const ASSIGNED_NAMES =
  'password|passwd|passphrase|pwd|pass|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|token';

const PEM_LABEL = '(?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?';
const PEM_LINE = [
  '[A-Za-z0-9+/]{16,}={0,2}',
  '[A-Za-z0-9+/]{0,15}={1,2}',
  'Proc-Type:[ \\t]*[\\w,-]+',
  'DEK-Info:[ \\t]*[\\w,-]+',
].join('|');

const RULES: Rule[] = [
  {
    kind: 'private-key',
    // a PEM block: its body and its END line. The body is base64 lines (a short last one ends in `=`),
    // and the `Proc-Type`/`DEK-Info` headers of an old encrypted key, each after a line break (`\n`
    // too, inside a JSON string, or a space once the text was put on one line). A block cut off
    // before its END loses all the body there is, and what follows it stays: prose, a next item, the
    // quote that closes a JSON string.
    pattern: new RegExp(
      `-----BEGIN ${PEM_LABEL}-----(?:(?:\\s|\\\\[nr])+(?:${PEM_LINE}))*(?:(?:\\s|\\\\[nr])*-----END ${PEM_LABEL}-----)?`,
      'g',
    ),
  },
  { kind: 'aws-access-key', pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b/g },
  { kind: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { kind: 'github-token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})\b/g },
  { kind: 'gitlab-token', pattern: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}/g },
  { kind: 'slack-token', pattern: /(?<![A-Za-z0-9_-])xox[abposr]-[A-Za-z0-9-]{10,}/g },
  { kind: 'stripe-key', pattern: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { kind: 'npm-token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  {
    // OpenAI / Anthropic style: sk-…, sk-proj-…, sk-ant-api03-…: a long run with a digit in it, so
    // `sk-learn`, `task-runner` and `sk-some-long-branch-name` survive
    kind: 'api-key',
    pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g,
    replace: (match) => (/\d/.test(match) ? marker('api-key') : match),
  },
  // three base64url segments, the first two JSON (`eyJ` is `{"`); a scan starts only where a segment run does
  { kind: 'jwt', pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  {
    kind: 'bearer-token',
    pattern: /\b(Bearer|Basic)\s+([A-Za-z0-9._~+/=-]{16,})/gi,
    // a token is machine-made (a digit, base64 padding or a capital inside); prose after "basic" is not
    replace: (match, scheme, token) =>
      /[\d+/=]/.test(token) || /[A-Z]/.test(token.slice(1)) ? `${scheme} ${marker('bearer-token')}` : match,
  },
  {
    // scheme://user:password@host and scheme://:password@host — the user and host stay, the password goes.
    // A scheme is short: bounding it keeps a long run of letters, dots and dashes from being scanned from every start.
    kind: 'connection-string',
    pattern: /\b([a-z][a-z0-9+.-]{0,31}:\/\/)([^\s:/@]*):([^\s/@]+)@/gi,
    replace: (_m, scheme, user) => `${scheme}${user}:${marker('connection-string')}@`,
  },
  {
    kind: 'assignment',
    // `password=hunter2`, `PASSWORD=%Wia…`, `smtp password: RYay…`, `DB_PASSWORD: "s3cr3t"`, `"api_key": "…"`;
    // `--token abc…` is not covered (no separator)
    // (a name and value quoted inside a JSON string, `{\"api_key\": \"…\"}`, too)
    pattern: new RegExp(
      `(\\b[A-Za-z0-9_]*(?:${ASSIGNED_NAMES})(?:\\\\?["'])?)(\\s*(?:=|:=|:)\\s*)(\\\\?"[^"\\n]*?\\\\?"|'[^'\\n]*'|[^\\s"',;)}\\]]+)`,
      'gi',
    ),
    replace: (match, name, separator, value) => {
      const quote = /^\\?["']/.exec(value)?.[0] ?? '';
      const inner = quote ? value.slice(quote.length, value.endsWith(quote) ? -quote.length : -1) : value;
      if (!credentialValue(inner, separator, quote !== '')) return match;
      return `${name}${separator}${quote}${marker('secret')}${quote}`;
    },
  },
];

// Every rule's match holds one of these (case aside; an assignment's name is followed by its
// separator): a text without any is spared the rules — most texts, since the block and the session
// start show dozens at each call, and prose speaks of tokens and keys without assigning them.
const MAY_HOLD_SECRET = new RegExp(
  [
    '-----BEGIN',
    'A[KSGIRNP][A-Z]A',
    'AIza',
    'gh[pousr]_',
    'github_pat',
    'glpat-',
    'xox',
    '_live_',
    '_test_',
    'npm_',
    'sk-',
    'eyJ',
    'bearer',
    'basic',
    '://',
    `(?:pass|pwd|secret|key|token)\\w{0,40}\\\\?["']?\\s*[:=]`,
  ].join('|'),
  'i',
);

/** Replace every secret in `text`; the rest of the text is kept exactly as written. */
export function redactSecrets(text: string): Redaction {
  const kinds: string[] = [];
  if (!MAY_HOLD_SECRET.test(text)) return { text, kinds };
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
      const groups = rest.slice(0, -2) as string[]; // the captures; offset and input follow them
      const replaced = rule.replace ? rule.replace(match, ...groups) : marker(rule.kind);
      if (replaced !== match) kinds.push(rule.kind);
      return replaced;
    });
  }
  return { text: out, kinds };
}

/**
 * Every string in a JSON value redacted (a command's `--json` product, a log line being scrubbed: what
 * was read may predate the rules). The value itself when nothing changed, so a caller can tell.
 */
export function redactStrings(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value).text;
  if (Array.isArray(value)) {
    const out = value.map(redactStrings);
    return out.some((v, i) => v !== value[i]) ? out : value;
  }
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  const out = entries.map(([k, v]) => [k, redactStrings(v)] as const);
  return out.some(([, v], i) => v !== entries[i][1]) ? Object.fromEntries(out) : value;
}
