// Secret redaction (SPEC §4.6): knowledge is committed and injected into every later session, so a
// credential pasted into a note must never be stored. Each rule replaces only the secret itself with
// `[REDACTED:<kind>]`, keeping the words around it (and the name of an assignment) readable.

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
// `%s`, `***`, `xxxx`, `...`, or an empty/placeholder word.
const PLACEHOLDER = /^(?:[$<{%]|\*+$|x+$|\.+$|(?:null|none|nil|true|false|empty|redacted|required|optional|changeme|undefined)$)/i;

/**
 * An assignment value that looks like a credential rather than prose: `password=hunter2` and
 * `password = "x1"` are, `secret: rotate it` and `?token= param` are not.
 */
function credentialValue(value: string, separator: string, quoted: boolean): boolean {
  if (value === '' || PLACEHOLDER.test(value) || value.startsWith('[REDACTED')) return false;
  if (quoted || /^:?=$/.test(separator)) return value.length >= 4;
  // after a colon, or `= ` with a space, an unquoted value must look machine-made: long, or with a digit or symbol
  return value.length >= 16 || (value.length >= 6 && /[\d\W_]/.test(value));
}

const ASSIGNED_NAMES =
  'password|passwd|pwd|pass|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|token';

const RULES: Rule[] = [
  {
    kind: 'private-key',
    // a whole PEM block; a block cut off before its END line is redacted to the end of the text
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  { kind: 'aws-access-key', pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b/g },
  { kind: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: 'github-token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})\b/g },
  { kind: 'gitlab-token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}\b/g },
  { kind: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g },
  { kind: 'stripe-key', pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { kind: 'npm-token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  // OpenAI / Anthropic style: sk-…, sk-proj-…, sk-ant-… (a long run, so `sk-learn` or `task-runner` survive)
  { kind: 'api-key', pattern: /(?<![A-Za-z0-9_-])sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{20,}(?![A-Za-z0-9_-])/g },
  { kind: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  {
    kind: 'bearer-token',
    pattern: /\b(Bearer|Basic)\s+([A-Za-z0-9._~+/=-]{16,})/g,
    replace: (_m, scheme) => `${scheme} ${marker('bearer-token')}`,
  },
  {
    // scheme://user:password@host — the user and host stay, the password goes
    kind: 'connection-string',
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/@]+):([^\s/@]+)@/gi,
    replace: (_m, scheme, user) => `${scheme}${user}:${marker('connection-string')}@`,
  },
  {
    kind: 'assignment',
    // `password=hunter2`, `DB_PASSWORD: "s3cr3t"`, `"api_key": "…"`, `--token abc…` is not covered (no separator)
    pattern: new RegExp(
      `(\\b[A-Za-z0-9_]*(?:${ASSIGNED_NAMES})["']?)(\\s*(?:=|:=|:)\\s*)("[^"\\n]*"|'[^'\\n]*'|[^\\s"',;)}\\]]+)`,
      'gi',
    ),
    replace: (match, name, separator, value) => {
      const quote = /^["']/.test(value) ? value[0] : '';
      const inner = quote ? value.slice(1, -1) : value;
      if (!credentialValue(inner, separator, quote !== '')) return match;
      return `${name}${separator}${quote}${marker('secret')}${quote}`;
    },
  },
];

/** Replace every secret in `text`; the rest of the text is kept exactly as written. */
export function redactSecrets(text: string): Redaction {
  const kinds: string[] = [];
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
