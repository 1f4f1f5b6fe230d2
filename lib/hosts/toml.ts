import { CairnError } from '../core/errors.js';

// The smallest TOML cairn needs: find, append and read one table; the user's text is only appended to (a library would
// re-serialise it, losing comments and layout).

export type TomlValue = string | string[];

/** `mcp_servers . "cairn"` → ['mcp_servers', 'cairn'] */
function keyPath(text: string): string[] | undefined {
  const parts: string[] = [];
  const re = /\s*(?:([A-Za-z0-9_-]+)|"((?:[^"\\]|\\.)*)"|'([^']*)')\s*(\.|$)/y;
  let at = 0;
  while (at < text.length) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) return undefined;
    parts.push(m[1] ?? (m[2] !== undefined ? unescapeBasic(m[2]) : m[3]));
    at = re.lastIndex;
    if (m[4] === '') break;
  }
  return parts.length ? parts : undefined;
}

const ESCAPES: Record<string, string> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' };

function unescapeBasic(body: string): string {
  return body.replace(/\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)/g, (_, e: string) =>
    e.length > 1 ? String.fromCodePoint(parseInt(e.slice(1), 16)) : (ESCAPES[e] ?? e),
  );
}

interface Statement {
  kind: 'table' | 'array-table' | 'key';
  path: string[];
  value?: string;
}

/** Headers and key/value pairs, skipping what hides one. */
function statements(text: string): Statement[] {
  const out: Statement[] = [];
  let table: string[] = [];
  let i = 0;
  const n = text.length;
  const skipBlank = () => {
    for (;;) {
      while (i < n && /[ \t\r\n]/.test(text[i])) i++;
      if (text[i] !== '#') return;
      while (i < n && text[i] !== '\n') i++;
    }
  };
  const unterminated = () => new CairnError('input', 'not valid TOML: a string, array or table is not closed');
  const value = (): string => {
    const start = i;
    let depth = 0;
    while (i < n) {
      const c = text[i];
      if (c === '"' || c === "'") {
        const triple = text.startsWith(c.repeat(3), i);
        const close = triple ? c.repeat(3) : c;
        i += close.length;
        for (;;) {
          if (i >= n || (!triple && text[i] === '\n')) throw unterminated();
          if (c === '"' && text[i] === '\\') i += 2;
          else if (text.startsWith(close, i)) {
            i += close.length;
            while (triple && text[i] === c) i++; // up to two quotes may end a multi-line string's content
            break;
          } else i++;
        }
        continue;
      }
      if (c === '[' || c === '{') depth++;
      else if (c === ']' || c === '}') depth--;
      else if (depth === 0 && (c === '\n' || c === '#')) break;
      else if (depth > 0 && c === '#') {
        while (i < n && text[i] !== '\n') i++;
        continue;
      }
      i++;
      if (depth === 0 && (c === ']' || c === '}')) break;
    }
    if (depth > 0) throw unterminated();
    return text.slice(start, i).trim();
  };
  for (skipBlank(); i < n; skipBlank()) {
    const lineEnd = text.indexOf('\n', i) < 0 ? n : text.indexOf('\n', i);
    const line = text.slice(i, lineEnd).trim().slice(0, 60);
    if (text[i] === '[') {
      const array = text[i + 1] === '[';
      const open = i + (array ? 2 : 1);
      const close = outsideQuotes(text, open, lineEnd, array ? ']]' : ']');
      const path = close < 0 ? undefined : keyPath(text.slice(open, close));
      if (!path) throw new CairnError('input', `not valid TOML: a table header cannot be read (${line})`);
      out.push({ kind: array ? 'array-table' : 'table', path });
      table = path;
      i = close + (array ? 2 : 1); // a comment may follow
      continue;
    }
    const eq = outsideQuotes(text, i, lineEnd, '=');
    const path = eq < 0 ? undefined : keyPath(text.slice(i, eq));
    if (!path) throw new CairnError('input', `not valid TOML: a line is neither a table nor a key = value (${line})`);
    i = eq + 1;
    while (text[i] === ' ' || text[i] === '\t') i++;
    out.push({ kind: 'key', path: [...table, ...path], value: value() });
  }
  return out;
}

/** Outside a quoted key; -1 if not found. */
function outsideQuotes(text: string, from: number, end: number, target: string): number {
  for (let i = from; i < end; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      for (i++; i < end && text[i] !== c; i++) if (c === '"' && text[i] === '\\') i++;
    } else if (text.startsWith(target, i)) return i;
  }
  return -1;
}

const startsWith = (path: string[], prefix: string[]) => prefix.every((p, k) => path[k] === p);

/** 'blocked' when an inline table or array of tables above it could not be extended by an appended header. */
export function tomlTableState(text: string, path: string[]): 'present' | 'absent' | 'blocked' {
  let state: 'present' | 'absent' | 'blocked' = 'absent';
  for (const s of statements(text)) {
    if (startsWith(s.path, path)) return 'present';
    const above = path.slice(0, -1);
    const isAbove = s.path.length <= above.length && startsWith(above, s.path);
    if (isAbove && (s.kind === 'key' || s.kind === 'array-table')) state = 'blocked';
  }
  return state;
}

/** JSON's escapes are TOML's; DEL, which JSON leaves, is escaped too. */
export function tomlString(value: string): string {
  return JSON.stringify(value).replace(/\x7f/g, '\\u007f');
}

export function appendTomlTable(text: string, path: string[], values: Record<string, TomlValue>): string {
  const header = `[${path.map((p) => (/^[A-Za-z0-9_-]+$/.test(p) ? p : tomlString(p))).join('.')}]`;
  const value = (v: TomlValue) => (Array.isArray(v) ? `[${v.map(tomlString).join(', ')}]` : tomlString(v));
  const lines = Object.entries(values).map(([k, v]) => `${k} = ${value(v)}`);
  const lead = text === '' ? '' : text.endsWith('\n') ? '\n' : '\n\n';
  return `${text}${lead}${[header, ...lines].join('\n')}\n`;
}

/** Undefined when the document has none. */
export function readTomlTable(text: string, path: string[]): Record<string, TomlValue> | undefined {
  let found = false;
  const values: Record<string, TomlValue> = {};
  for (const s of statements(text)) {
    if (s.kind === 'table' && s.path.length === path.length && startsWith(s.path, path)) found = true;
    if (s.kind !== 'key' || s.path.length !== path.length + 1 || !startsWith(s.path, path)) continue;
    const parsed = stringOrList(s.value!);
    if (parsed !== undefined) values[s.path[path.length]] = parsed;
  }
  return found ? values : undefined;
}

function stringOrList(source: string): TomlValue | undefined {
  const str = /^(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)')$/;
  const one = (s: string) => {
    const m = str.exec(s.trim());
    return m ? (m[1] !== undefined ? unescapeBasic(m[1]) : m[2]) : undefined;
  };
  if (!source.startsWith('[')) return one(source);
  const items: string[] = [];
  const re = /\s*(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)')\s*(,|\]$)/y;
  re.lastIndex = 1;
  for (let m = re.exec(source); m; m = re.exec(source)) {
    items.push(m[1] !== undefined ? unescapeBasic(m[1]) : m[2]);
    if (m[3] === ']') return items;
  }
  return /^\[\s*\]$/.test(source) ? [] : undefined;
}
