// Evidence level (SPEC §3.6): only L1/L2 reinforce, so the loop never learns to approve by narrative.

export type EvidenceLevel = 'L1' | 'L2' | 'L3';

type Block = { kind: 'line'; text: string } | { kind: 'fence'; info: string; body: string[] };

export function evidenceLevel(text: string, changedFiles?: string[]): EvidenceLevel {
  if (typeof text !== 'string') return 'L3';
  const blocks = readBlocks(withoutHtmlComments(text));
  if (showsExecution(blocks)) return 'L1';
  if (citesQuotedCode(blocks, changedFiles)) return 'L2';
  return 'L3';
}

// Markdown structure

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;

function readBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  let open: { fence: string; body: string[] } | null = null;
  for (const line of text.split(/\r?\n/)) {
    if (open) {
      const close = FENCE_CLOSE.exec(line);
      if (close && close[1][0] === open.fence[0] && close[1].length >= open.fence.length) open = null;
      else open.body.push(line);
      continue;
    }
    const start = FENCE_OPEN.exec(line);
    // a backtick "fence" whose info has a backtick is inline code (CommonMark)
    if (start && !(start[1][0] === '`' && start[2].includes('`'))) {
      const info = firstWord(start[2]);
      open = { fence: start[1], body: [] };
      // an unclosed fence runs to the end (CommonMark)
      if (info !== 'verdict-json') blocks.push({ kind: 'fence', info, body: open.body });
      continue;
    }
    blocks.push({ kind: 'line', text: line });
  }
  return blocks;
}

/** The verdict is a summary, not evidence; an unclosed `<!--` stays as text. */
function withoutHtmlComments(text: string): string {
  const kept: string[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf('<!--', from);
    if (open < 0) break;
    const close = text.indexOf('-->', open + 4);
    if (close < 0) break;
    const newline = text.indexOf('\n', open);
    kept.push(text.slice(from, open), newline >= 0 && newline < close ? '\n' : ' ');
    from = close + 3;
  }
  kept.push(text.slice(from));
  return kept.join('');
}

function firstWord(text: string): string {
  const word = /\S+/.exec(text);
  return word ? word[0].toLowerCase() : '';
}

// L1: execution output

const SHELL_PROMPT = /^\s*\$ +\S/;
const RUNNER_OUTPUT = [
  // "12 passed", "Tests: 14 passed", "Test Files  2 passed"
  /(?<![\w.])\d+ (?:tests? )?(?:passed|failed|passing|failing)\b/i,
  /^\s*(?:not )?ok \d+(?:\s+-\s|\s*$)/, // TAP: "ok 1 - adds numbers"
  /^\s*(?:PASS|FAIL)\s+\S*[./]/, // jest/vitest: "PASS src/x.test.ts"
  /\bexit(?:ed with)? (?:code|status):?\s*-?\d+/i, // "exit code 0", "Exit status: 2"
];

const PREVALIDATED_HEADING = /^ {0,3}#{1,6}[ \t]+[*_]*pre[- ]?validated[ \t]+checks(?![A-Za-z0-9])/i;
const PREVALIDATED_BOLD = /^[ \t]*(?:\*\*|__)[ \t]*pre[- ]?validated[ \t]+checks(?![A-Za-z0-9])[^*_\n]*(?:\*\*|__)(.*)/i;

function showsExecution(blocks: Block[]): boolean {
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i];
    if (block.kind === 'fence') {
      if (block.body.some(isExecutionOutput)) return true;
      continue;
    }
    // outside a fence only under a "Pre-validated checks" heading or bold line
    if (PREVALIDATED_HEADING.test(block.text) && hasContentAfter(blocks, i + 1)) return true;
    const bold = PREVALIDATED_BOLD.exec(block.text);
    if (bold && (/[A-Za-z0-9]/.test(bold[1]) || hasContentAfter(blocks, i + 1))) return true;
  }
  return false;
}

function isExecutionOutput(line: string): boolean {
  return SHELL_PROMPT.test(line) || RUNNER_OUTPUT.some((pattern) => pattern.test(line));
}

function hasContentAfter(blocks: Block[], from: number): boolean {
  for (let i = from; i < blocks.length; i++) {
    const block = blocks[i];
    if (block.kind === 'fence') return block.body.some((line) => line.trim() !== '');
    if (block.text.trim() === '') continue;
    return !HEADING.test(block.text);
  }
  return false;
}

// L2: a file:line citation together with a quoted fragment

const LINE_NUMBER = /:\d+(?:[:-]\d+)?/y; // ":12", ":12:5", ":12-20"
const MAX_PATH = 512;
// `src/x.ts:12` alone quotes no code
const CITATION_ONLY = /^[A-Za-z0-9_.~@+\-/\\]+:\d+(?:[:-]\d+)?$/;
const INLINE_CODE = /`([^`\n]+)`/g;
// the curly form excludes its opener too, so a line of lone “ stays linear
const DOUBLE_QUOTED = /"([^"\n]+)"|“([^“”\n]+)”/g;

function citesQuotedCode(blocks: Block[], changedFiles: string[] | undefined): boolean {
  const changed = (Array.isArray(changedFiles) ? changedFiles : [])
    .filter((file): file is string => typeof file === 'string')
    .map(normalisePath)
    .filter((file) => file !== '');
  const citesRelevantFile = (line: string): boolean =>
    citedPaths(line).some((path) => changed.length === 0 || changed.some((file) => samePath(path, file)));

  let cited = false;
  let quoted = false;
  for (const block of blocks) {
    if (block.kind === 'fence') {
      cited ||= block.body.some(citesRelevantFile);
      quoted ||= block.body.some((line) => isQuotedFragment(line, 1));
    } else {
      cited ||= citesRelevantFile(block.text);
      quoted ||= hasQuotedFragment(block.text);
    }
    if (cited && quoted) return true;
  }
  return false;
}

function hasQuotedFragment(line: string): boolean {
  for (const code of line.matchAll(INLINE_CODE)) if (isQuotedFragment(code[1], 1)) return true;
  for (const quote of line.matchAll(DOUBLE_QUOTED)) if (isQuotedFragment(quote[1] ?? quote[2], 3)) return true;
  return false;
}

function isQuotedFragment(text: string, minLength: number): boolean {
  const fragment = text.trim();
  return fragment.length >= minLength && !CITATION_ONLY.test(fragment);
}

function citedPaths(line: string): string[] {
  const paths: string[] = [];
  for (let colon = line.indexOf(':'); colon >= 0; colon = line.indexOf(':', colon + 1)) {
    LINE_NUMBER.lastIndex = colon;
    const lineNumber = LINE_NUMBER.exec(line);
    if (!lineNumber) continue;
    // "host:8080/api" is a port, "x.ts:12abc" no line number
    const next = line.charAt(colon + lineNumber[0].length);
    if (/[A-Za-z0-9_/]/.test(next)) continue;

    let start = colon;
    while (start > 0 && colon - start <= MAX_PATH && isPathChar(line.charCodeAt(start - 1))) start--;
    if (colon - start > MAX_PATH) continue; // a long run of characters, not a path
    const path = line.slice(start, colon);
    if (looksLikeFile(path)) paths.push(normalisePath(path));
  }
  return paths;
}

/** Not a URL host or a number. */
function looksLikeFile(path: string): boolean {
  if (path.startsWith('//')) return false; // "http://host:8080": the scheme's slashes
  if (!/[A-Za-z]/.test(path)) return false; // "127.0.0.1:80", "12/05:30"
  if (path.includes('/') || path.includes('\\')) return true;
  const extension = path.slice(path.lastIndexOf('.') + 1);
  return path.includes('.') && /^[A-Za-z0-9]+$/.test(extension) && /[A-Za-z]/.test(extension);
}

function isPathChar(code: number): boolean {
  return (
    (code >= 48 && code <= 57) || // 0-9
    (code >= 65 && code <= 90) || // A-Z
    (code >= 97 && code <= 122) || // a-z
    code === 95 || // _
    code === 46 || // .
    code === 45 || // -
    code === 47 || // /
    code === 92 || // \
    code === 64 || // @ (scoped packages)
    code === 43 || // +
    code === 126 // ~
  );
}

function normalisePath(path: string): string {
  let normal = path.replace(/\\/g, '/');
  while (normal.startsWith('./')) normal = normal.slice(2);
  return normal;
}

/** Equal, or one is the other with leading directories. */
function samePath(cited: string, changed: string): boolean {
  return cited === changed || changed.endsWith(`/${cited}`) || cited.endsWith(`/${changed}`);
}
