// The one redactor (SPEC §4.6): only the secret becomes `[REDACTED:<kind>]`; each rule linear in the text's length.

export interface Redaction {
  text: string;
  kinds: string[];
}

interface Rule {
  kind: string;
  pattern: RegExp;
  replace?: (match: string, ...groups: string[]) => string;
}

const marker = (kind: string) => `[REDACTED:${kind}]`;

// names a secret (`$DB_PASSWORD`, `<password>`, `%s`, `***`) rather than holding one
const PLACEHOLDER = /^(?:\$(?:\{.*|[A-Z_][A-Z0-9_]*)|[<{].*|%(?:[sdif]|\(.*|\w+%)|\*+|[xX]+|\.+)$/;
// a member reference or call, unquoted after a colon: code naming a value
const CODE_REFERENCE = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\(.*)?$/;
const WORDS_IN_CAMEL_CASE = /^[A-Za-z][a-z]*(?:[A-Z][a-z]{2,})*$/;
const PLACEHOLDER_WORD = /^(?:null|none|nil|true|false|empty|redacted|required|optional|changeme|undefined)$/i;

function credentialValue(value: string, separator: string, quoted: boolean): boolean {
  if (value === '' || value.startsWith('[REDACTED')) return false;
  if (PLACEHOLDER.test(value) || PLACEHOLDER_WORD.test(value)) return false;
  if (quoted || /^:?=$/.test(separator)) return value.length >= 4;
  if (CODE_REFERENCE.test(value)) return false;
  // unquoted after a colon or `= `, a value must look machine-made
  if (value.length >= 16 || (value.length >= 6 && /[\d\W_]/.test(value))) return true;
  return value.length >= 8 && /[a-z]/.test(value) && /[A-Z]/.test(value.slice(1)) && !WORDS_IN_CAMEL_CASE.test(value);
}

const ASSIGNED_NAMES = [
  'password|passwd|passphrase|pwd|pass|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key',
  'auth[_-]?token|access[_-]?token|refresh[_-]?token|token',
].join('|');

const PEM_LABEL = '(?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?';
const PEM_LINE = ['[A-Za-z0-9+/]{16,}={0,2}', '[A-Za-z0-9+/]{0,15}={1,2}', 'Proc-Type:[ \\t]*[\\w,-]+', 'DEK-Info:[ \\t]*[\\w,-]+'].join(
  '|',
);

const RULES: Rule[] = [
  {
    kind: 'private-key',
    // body lines (after a newline, literal `\n` or space) and END; a cut-off block loses its body
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
    // only with a digit, so `sk-learn` and branch names survive
    kind: 'api-key',
    pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g,
    replace: (match) => (/\d/.test(match) ? marker('api-key') : match),
  },
  { kind: 'jwt', pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  {
    kind: 'bearer-token',
    pattern: /\b(Bearer|Basic)\s+([A-Za-z0-9._~+/=-]{16,})/gi,
    replace: (match, scheme, token) =>
      /[\d+/=]/.test(token) || /[A-Z]/.test(token.slice(1)) ? `${scheme} ${marker('bearer-token')}` : match,
  },
  {
    // the password goes, user and host stay; a bounded scheme: no rescans of long runs
    kind: 'connection-string',
    pattern: /\b([a-z][a-z0-9+.-]{0,31}:\/\/)([^\s:/@]*):([^\s/@]+)@/gi,
    replace: (_m, scheme, user) => `${scheme}${user}:${marker('connection-string')}@`,
  },
  {
    kind: 'assignment',
    // `password=…`, `KEY: "…"`, `"api_key": "…"`, also inside a JSON string
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

// every rule's match holds one of these; most texts hold none
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

export function redactSecrets(text: string): Redaction {
  const kinds: string[] = [];
  if (!MAY_HOLD_SECRET.test(text)) return { text, kinds };
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
      const groups = rest.slice(0, -2) as string[]; // offset and input follow
      const replaced = rule.replace ? rule.replace(match, ...groups) : marker(rule.kind);
      if (replaced !== match) kinds.push(rule.kind);
      return replaced;
    });
  }
  return { text: out, kinds };
}

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
