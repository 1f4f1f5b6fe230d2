import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bdComments, mayAddComment } from '../lib/knowledge/bd-command.js';
import { simpleCommands } from '../lib/core/shell.js';
import { FIXTURES } from './helpers.js';

// Finding every `bd comments add` an agent ran (SPEC §4.2), on real comment texts from
// fixtures/knowledge/comments.*.jsonl quoted the ways agents quote them.

interface Comment {
  id: number;
  issue_id: string;
  text: string;
}
const comments: Comment[] = ['comments.newest-73fd2a9.jsonl', 'comments.largest-d298489.jsonl'].flatMap((f) =>
  readFileSync(join(FIXTURES, 'knowledge', f), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Comment),
);
const text = (issue: string, id: number) => {
  const c = comments.find((x) => x.issue_id === issue && x.id === id);
  if (!c) throw new Error(`no comment ${issue}#${id}`);
  return c.text;
};

/** Shell quoting as an agent writes it. */
const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const dq = (s: string) => `"${s.replace(/([\\"$`])/g, '\\$1')}"`;

const SQLITE = text('bdcompound-5bg', 158); // holds ' and " and $VALUE
const SED = text('bdcompound-o5q', 169); // holds 2>&1, ||, &&, quotes, a backslash
const EXIT = text('bdcompound-807.19', 39); // parentheses and single quotes
const WORKSPACE = text('bdcompound-807.10', 33); // $GITHUB_WORKSPACE and an em dash
const BSD = text('bdcompound-4xy', 141); // \x{NNNN}, $'\uNNNN'
const RUFF = text('medsimples-odru', 7); // two lines
const CACHE = text('medsimples-odru', 8);
const PYDANTIC = text('medsimples-7zgx', 1); // non-ASCII: —
const CPF = text('medsimples-7zgx', 2); // non-ASCII: á
const FIX = text('medsimples-ycer.13', 273); // FIX: is not a knowledge type
const DECISION_NAME = text('bdcompound-8nm', 1);
const DECISION_ARCH = text('bdcompound-8nm', 2);

const cases: [string, string, { bead: string; text: string }[]][] = [
  ['double quotes', `bd comments add bdcompound-8nm ${dq(DECISION_NAME)}`, [{ bead: 'bdcompound-8nm', text: DECISION_NAME }]],
  ['single quotes', `bd comments add bdcompound-8nm ${sq(DECISION_ARCH)}`, [{ bead: 'bdcompound-8nm', text: DECISION_ARCH }]],
  ['singular `comment add`', `bd comment add bdcompound-8nm ${sq(DECISION_NAME)}`, [{ bead: 'bdcompound-8nm', text: DECISION_NAME }]],
  [
    'escaped double quotes and $ inside double quotes',
    `bd comments add bdcompound-5bg ${dq(SQLITE)}`,
    [{ bead: 'bdcompound-5bg', text: SQLITE }],
  ],
  [
    "the same text in single quotes ('\\'' idiom)",
    `bd comments add bdcompound-5bg ${sq(SQLITE)}`,
    [{ bead: 'bdcompound-5bg', text: SQLITE }],
  ],
  ['operators inside the quoted text', `bd comments add bdcompound-o5q ${sq(SED)}`, [{ bead: 'bdcompound-o5q', text: SED }]],
  ['parentheses inside quotes', `bd comments add bdcompound-807.19 ${dq(EXIT)}`, [{ bead: 'bdcompound-807.19', text: EXIT }]],
  ['backslashes kept inside single quotes', `bd comments add bdcompound-4xy ${sq(BSD)}`, [{ bead: 'bdcompound-4xy', text: BSD }]],
  ['backslashes inside double quotes', `bd comments add bdcompound-4xy ${dq(BSD)}`, [{ bead: 'bdcompound-4xy', text: BSD }]],
  [
    'chained with && and a `2>&1 && bd close` tail',
    `bd comments add bdcompound-807.10 ${dq(WORKSPACE)} 2>&1 && bd close bdcompound-807.10`,
    [{ bead: 'bdcompound-807.10', text: WORKSPACE }],
  ],
  [
    'three in a chain with ; and &&',
    `bd comments add bdcompound-8nm ${dq(DECISION_NAME)}; bd comments add bdcompound-8nm ${sq(DECISION_ARCH)} && bd comments add medsimples-7zgx ${dq(CPF)}`,
    [
      { bead: 'bdcompound-8nm', text: DECISION_NAME },
      { bead: 'bdcompound-8nm', text: DECISION_ARCH },
      { bead: 'medsimples-7zgx', text: CPF },
    ],
  ],
  [
    'one per line, with a cd first and a close last',
    `cd /repo\nbd comments add medsimples-7zgx ${dq(PYDANTIC)}\nbd comments add medsimples-7zgx ${sq(CPF)}\nbd close medsimples-7zgx`,
    [
      { bead: 'medsimples-7zgx', text: PYDANTIC },
      { bead: 'medsimples-7zgx', text: CPF },
    ],
  ],
  ['a multi-line body in double quotes', `bd comments add medsimples-odru ${dq(RUFF)}`, [{ bead: 'medsimples-odru', text: RUFF }]],
  [
    "a heredoc through $(cat <<'EOF')",
    `bd comments add medsimples-odru "$(cat <<'EOF'\n${CACHE}\nEOF\n)"`,
    [{ bead: 'medsimples-odru', text: CACHE }],
  ],
  [
    'an unquoted heredoc substitution',
    `bd comments add medsimples-odru $(cat <<EOF\n${RUFF}\nEOF\n)`,
    [{ bead: 'medsimples-odru', text: RUFF }],
  ],
  [
    '--file - with a heredoc on stdin (the body as bd reads it)',
    `bd comments add medsimples-odru --file - <<'EOF'\n${CACHE}\nEOF`,
    [{ bead: 'medsimples-odru', text: CACHE + '\n' }],
  ],
  ['--file naming a file we cannot see', `bd comments add medsimples-odru --file notes.md`, []],
  [
    'a backslash-continued line',
    `bd comments add \\\n  bdcompound-8nm \\\n  ${dq(DECISION_NAME)}`,
    [{ bead: 'bdcompound-8nm', text: DECISION_NAME }],
  ],
  [
    'ANSI-C quoting',
    `bd comments add x $'LEARNED: tabs\\there, a quote \\' and \\u00e9'`,
    [{ bead: 'x', text: "LEARNED: tabs\there, a quote ' and é" }],
  ],
  [
    'an unquoted body is joined as bd joins its arguments',
    'bd comments add x LEARNED: retries need jitter',
    [{ bead: 'x', text: 'LEARNED: retries need jitter' }],
  ],
  [
    'an --author flag before the id',
    `bd comments add --author agent bdcompound-8nm ${dq(DECISION_NAME)}`,
    [{ bead: 'bdcompound-8nm', text: DECISION_NAME }],
  ],
  ['an env assignment and `if` before it', `if BD_ACTOR=bot bd comments add x ${sq(CPF)}; then echo ok; fi`, [{ bead: 'x', text: CPF }]],
  ['inside a subshell and a pipeline', `(cd repo && bd comments add x ${dq(CPF)}) | tee log.txt`, [{ bead: 'x', text: CPF }]],
  ['inside $( ) assigned to a variable', `out=$(bd comments add x ${dq(CPF)} 2>/dev/null) || true`, [{ bead: 'x', text: CPF }]],
  ['echo of a capture command is not a capture', `echo "bd comments add x ${DECISION_NAME.replace(/"/g, '')}"`, []],
  ['echo with unquoted words is not a capture', `echo bd comments add x ${sq(DECISION_NAME)}`, []],
  ['grep for the command is not a capture', `grep -rn 'bd comments add' plugins/ | head`, []],
  ['a commented-out capture is not a capture', `# bd comments add x ${sq(DECISION_NAME)}\nls`, []],
  [
    'a heredoc body that mentions a capture is data',
    `cat > notes.md <<'EOF'\nbd comments add x "LEARNED: fake"\nEOF\nbd comments add y ${sq(CPF)}`,
    [{ bead: 'y', text: CPF }],
  ],
  [
    'FIX: text is returned as written (the type check comes later)',
    `bd comments add medsimples-ycer.13 ${dq(FIX)}`,
    [{ bead: 'medsimples-ycer.13', text: FIX }],
  ],
  ['bd comments list is not add', 'bd comments list x && bd comments x', []],
  ['no text after the id', 'bd comments add x', []],
  ['bd by path', `/usr/local/bin/bd comments add x ${sq(CPF)}`, [{ bead: 'x', text: CPF }]],
];

describe('bdComments', () => {
  it.each(cases)('%s', (_name, command, expected) => {
    expect(bdComments(command)).toEqual(expected);
  });

  it('the table covers at least 25 commands', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  it('round-trips every real comment text through both quoting styles', () => {
    for (const c of comments) {
      expect(bdComments(`bd comments add ${c.issue_id} ${dq(c.text)} && bd close ${c.issue_id}`)).toEqual([
        { bead: c.issue_id, text: c.text },
      ]);
      expect(bdComments(`bd comments add ${c.issue_id} ${sq(c.text)}; bd sync`)).toEqual([{ bead: c.issue_id, text: c.text }]);
    }
  });

  it('looks at its checkpoint (a deadline) as it reads a long command, and stops when it throws', () => {
    const long = Array.from({ length: 5_000 }, (_, i) => `bd comments add led-${i} "LEARNED: note ${i}"`).join(' && ');
    let left = 100;
    expect(() =>
      bdComments(long, () => {
        if (--left === 0) throw new Error('deadline passed');
      }),
    ).toThrow('deadline passed');
    expect(bdComments(long, () => undefined)).toHaveLength(5_000);
  });

  it('the hot-path pre-check passes every capture and rejects ordinary commands', () => {
    for (const [, command, expected] of cases) if (expected.length) expect(mayAddComment(command)).toBe(true);
    for (const command of ['npm test', 'git commit -m "add comments"', 'ls -la', 'bd list --status=open'])
      expect(mayAddComment(command)).toBe(false);
  });
});

describe('simpleCommands', () => {
  it('runs its checkpoint after each command it reads, those inside `$( )` too, and stops when it throws', () => {
    const script = Array.from({ length: 1_000 }, (_, i) => `echo ${i} $(date +%s)`).join(' && ');
    let looks = 0;
    expect(simpleCommands(script, () => void looks++)).toHaveLength(2_000);
    expect(looks).toBeGreaterThanOrEqual(2_000);
    let left = 10;
    expect(() =>
      simpleCommands(script, () => {
        if (--left === 0) throw new Error('deadline passed');
      }),
    ).toThrow('deadline passed');
  });

  it('drops redirections and their targets, keeps the words', () => {
    expect(simpleCommands('npm test 2>&1 >out.log < in.txt | tail -5').map((c) => c.words)).toEqual([
      ['npm', 'test'],
      ['tail', '-5'],
    ]);
  });

  it('concatenates adjacent quoted pieces into one word', () => {
    expect(simpleCommands(`printf "a"'b'c"$(true)"`)[0].words).toEqual(['printf', 'abc$(true)']);
  });

  it('a <<- heredoc strips leading tabs, and its body is not a command', () => {
    const cmds = simpleCommands('cat <<-END\n\tbd comments add x "LEARNED: y"\n\tEND\nls');
    expect(cmds).toEqual([{ words: ['cat'], heredoc: 'bd comments add x "LEARNED: y"\n' }, { words: ['ls'] }]);
  });

  it('an unterminated quote reads to the end instead of throwing', () => {
    expect(simpleCommands(`bd comments add x "LEARNED: never closed`)[0].words).toEqual([
      'bd',
      'comments',
      'add',
      'x',
      'LEARNED: never closed',
    ]);
  });
});
