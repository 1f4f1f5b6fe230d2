import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, packageWithBrokenModules, REPO, run, tempProject } from './helpers.js';

// memory-capture as the hosts run it (SPEC §4.2): a PostToolUse payload on stdin, --bead/--text,
// --from-bd-json; the log it writes; and the hot path that must stay cheap.

const NOW = '2026-03-02T10:00:00.000Z';

function payload(name: string, cwd: string): string {
  const p = JSON.parse(readFileSync(join(FIXTURES, 'hooks', name), 'utf8'));
  if (p.cwd !== undefined) p.cwd = cwd;
  if (p.workspace_roots) p.workspace_roots = [cwd];
  return JSON.stringify(p);
}

function logOf(root: string): Record<string, unknown>[] {
  const path = join(root, '.cairn', 'memory', 'knowledge.jsonl');
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
}

const capture = (root: string, input: string, args: string[] = []) =>
  run('memory-capture', args, { cwd: root, input, env: { CAIRN_NOW: NOW } });

/** Claude Code's PostToolUse payload of a Bash call that ran `command` in `root` (with an empty stderr if asked). */
function bashPayload(root: string, command: string, withStderr = false): string {
  const tool_response = withStderr ? { stdout: 'ok', stderr: '' } : { stdout: 'ok' };
  return JSON.stringify({
    session_id: 's',
    cwd: root,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command },
    tool_response,
  });
}

describe('from a hook payload', () => {
  it('captures every comment of a chained Claude Code command, creating the store on the first write', () => {
    const root = tempProject({ init: false });
    const command = [
      `echo "bd comments add x 'LEARNED: not a capture'"`,
      `bd comments add led-7 "LEARNED: the staging \\"redirect\\" URI ends with a slash" 2>&1`,
      `bd comments add led-7 'SKIP: nothing to keep'`,
      `bd comments add led-7 'BUG: not a knowledge type'`,
      `bd comments add led-8 "DECISION: invoices round half-even — the tax office says so" && bd close led-8`,
    ].join(' && ');
    const input = bashPayload(root, command, true);
    const r = capture(root, input);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(logOf(root)).toEqual([
      {
        key: 'learned-the-staging-redirect-uri-ends-with-a-slash',
        type: 'learned',
        content: 'the staging "redirect" URI ends with a slash',
        source: 'hook',
        tags: ['learned'],
        ts: 1772445600,
        bead: 'led-7',
        project: expect.any(String),
      },
      {
        key: 'decision-invoices-round-half-even-the-tax-office-says-so',
        type: 'decision',
        content: 'invoices round half-even — the tax office says so',
        source: 'hook',
        tags: ['decision'],
        ts: 1772445600,
        bead: 'led-8',
        project: expect.any(String),
      },
    ]);
    expect(readFileSync(join(root, '.cairn', '.gitattributes'), 'utf8')).toContain('memory/knowledge.jsonl merge=union');
  });

  it.each([
    ['gemini-after-tool-shell.json', 'fact', 'led-151'],
    ['cursor-after-shell-execution.json', 'pattern', 'led-152'],
    ['codex-post-tool-use.json', 'decision', 'led-150'],
  ])('reads the %s shape', (fixture, type, bead) => {
    const root = tempProject();
    const r = capture(root, payload(fixture, root), ['--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      captured: [{ key: expect.stringMatching(new RegExp(`^${type}-`)), type, status: 'added' }],
      ignored: 0,
    });
    expect(logOf(root)).toMatchObject([{ type, bead }]);
  });

  it('a Codex call bd rejected (its transcript says exit 1; the payload cannot) captures nothing; the one that succeeded is captured', () => {
    const root = tempProject();
    const transcript = join(root, 'rollout.jsonl');
    writeFileSync(transcript, readFileSync(join(FIXTURES, 'hooks', 'codex-rollout.jsonl')));
    const call = (id: string) =>
      JSON.stringify({
        ...JSON.parse(payload('codex-post-tool-use.json', root)),
        transcript_path: transcript,
        tool_use_id: id,
      });
    expect(capture(root, call('call_resp_1795825409787'))).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(logOf(root)).toEqual([]);
    expect(capture(root, call('call_resp_1795825409635')).code).toBe(0);
    expect(logOf(root)).toMatchObject([{ type: 'decision', bead: 'led-150' }]);
  });

  it.each(['claude-post-tool-use-failure.json', 'gemini-after-tool-shell-failed.json'])(
    'a failed run (%s) captures nothing and creates nothing',
    (fixture) => {
      const root = tempProject({ init: false });
      const r = capture(root, payload(fixture, root));
      expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(readdirSync(root)).toEqual(['.git']);
    },
  );
});

describe('the hot path', () => {
  let pkg: string;
  beforeAll(() => {
    // better-sqlite3 and tiktoken that throw when loaded: loading either would be a line on stderr
    pkg = packageWithBrokenModules(['better-sqlite3', 'tiktoken']);
  });
  afterAll(() => rmSync(pkg, { recursive: true, force: true }));

  const viaPkg = (root: string, input: string) =>
    run('memory-capture', [], {
      cwd: root,
      input,
      env: { CAIRN_NOW: NOW },
      entry: join(pkg, 'bin', 'memory-capture.js'),
    });

  it('an ordinary shell command loads neither SQLite nor tiktoken, prints nothing and writes nothing', () => {
    const root = tempProject();
    const input = bashPayload(root, 'npm test -- --grep "bd comments"');
    expect(viaPkg(root, input)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(join(root, '.cairn', 'memory'))).toBe(false);
  });

  it('the capture bundle holds no pattern-loop or event-log code', () => {
    const bundle = readFileSync(join(REPO, 'dist', 'bin', 'memory-capture.run.cjs'), 'utf8');
    expect(bundle).not.toMatch(/^\/\/ dist\/lib\/(patterns|events)\//m);
    expect(bundle).toMatch(/^\/\/ dist\/lib\/knowledge\/capture\.js$/m);
  });

  it('the gate the hook starts with holds no runner, store or capture code, and requires nothing at start but fs, url and module (loaded before any script runs)', () => {
    const gate = readFileSync(join(REPO, 'dist', 'bin', 'memory-capture.cjs'), 'utf8');
    const modules = [...gate.matchAll(/^\/\/ (\S+)$/gm)].map((m) => m[1]);
    expect(modules).toContain('dist/lib/cli/gate.js');
    expect(
      modules.filter(
        (m) => /^dist\/lib\/(cli\/runner|store|knowledge\/(capture|index|reader|rotate))/.test(m) || m.startsWith('node_modules/'),
      ),
    ).toEqual([]);
    const atStart = [...gate.matchAll(/^(?:const|var) \S+ = (?:__toESM\()?require\("([^"]+)"\)/gm)].map((m) => m[1]);
    expect(atStart.sort()).toEqual(['node:fs', 'node:module', 'node:url']);
  });

  it('a command that adds no comment never loads the capture bundle; one that does, does', () => {
    const gated = packageWithBrokenModules([]);
    try {
      writeFileSync(join(gated, 'dist', 'bin', 'memory-capture.run.cjs'), "throw new Error('the capture bundle was loaded');\n");
      const root = tempProject();
      const viaGate = (input: string) =>
        run('memory-capture', [], {
          cwd: root,
          input,
          env: { CAIRN_NOW: NOW },
          entry: join(gated, 'bin', 'memory-capture.js'),
        });
      const ordinary = bashPayload(root, 'bd list --status=open');
      expect(viaGate(ordinary)).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(viaGate(payload('claude-post-tool-use-bash.json', root)).stderr).toMatch(/the capture bundle was loaded/);
    } finally {
      rmSync(gated, { recursive: true, force: true });
    }
  });

  it('a capture into a store with an index it cannot update is still recorded (the append is the commit point)', () => {
    const root = tempProject();
    writeFileSync(join(root, '.cairn', 'cache', 'state.db'), '');
    const r = viaPkg(root, payload('claude-post-tool-use-bash.json', root));
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^cairn memory-capture: captured; indexing is left to the next reader \(better-sqlite3 is not loadable/m);
    expect(logOf(root)).toMatchObject([{ type: 'learned', bead: 'led-142' }]);
  });
});

describe('--bead / --text', () => {
  it('captures once; the same note again is a duplicate; other content under the same key gets -2', () => {
    const root = tempProject();
    const first = capture(root, '', ['--bead', 'b-1', '--text', 'FACT: Ports below 1024 need root', '--json']);
    expect(JSON.parse(first.stdout)).toEqual({
      captured: [{ key: 'fact-ports-below-1024-need-root', type: 'fact', status: 'added' }],
      ignored: 0,
    });
    const again = capture(root, '', ['--bead', 'b-2', '--text', 'FACT:   ports below 1024 need **root**.', '--json']);
    expect(JSON.parse(again.stdout).captured).toEqual([{ key: 'fact-ports-below-1024-need-root', type: 'fact', status: 'duplicate' }]);
    const other = capture(root, '', ['--bead', 'b-3', '--text', 'FACT: Ports below 1024 need root, or CAP_NET_BIND_SERVICE', '--json']);
    expect(JSON.parse(other.stdout).captured).toEqual([
      { key: 'fact-ports-below-1024-need-root-or-cap-net-bind-service', type: 'fact', status: 'added' },
    ]);
    const long = 'x'.repeat(70);
    capture(root, '', ['--bead', 'b-4', '--text', `FACT: ${long} one`]);
    const collided = capture(root, '', ['--bead', 'b-5', '--text', `FACT: ${long} two`, '--json']);
    expect(JSON.parse(collided.stdout).captured[0]).toEqual({
      key: `fact-${'x'.repeat(60)}-2`,
      type: 'fact',
      status: 'added',
    });
    expect(logOf(root)).toHaveLength(4);
  });

  it('a note typed without a type prefix is refused with what to write, not dropped in silence', () => {
    const root = tempProject();
    for (const text of ['retries need jitter', 'learned: retries need jitter']) {
      const r = capture(root, '', ['--bead', 'b-1', '--text', text]);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(
        /^cairn memory-capture: skipped \(pipeline continues\): --text needs a type prefix to be knowledge \(LEARNED: .* or SKIP:\), in capitals; nothing was captured\n$/,
      );
    }
    expect(capture(root, '', ['--bead', 'b-1', '--text', 'SKIP: not worth keeping']).stderr).toBe('');
    expect(logOf(root)).toEqual([]);
  });
});

describe('--from-bd-json', () => {
  it('names the first 20 captures on stderr, one line each, and counts the rest in one line', () => {
    const comments = Array.from({ length: 45 }, (_, i) => ({
      issue_id: `led-${i}`,
      text: `LEARNED: retry budget ${i % 30} is bounded by the caller's deadline`,
      created_at: NOW,
    }));
    const r = capture(tempProject(), JSON.stringify(comments), ['--from-bd-json']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(21);
    expect(
      lines
        .slice(0, 20)
        .every((l) =>
          /^cairn memory-capture: captured learned-retry-budget-\d+-is-bounded-by-the-caller-s-deadline \(bead led-\d+\)$/.test(l),
        ),
    ).toBe(true);
    expect(lines[20]).toBe('cairn memory-capture: and 10 more captured, 15 more already known');
  });

  it('imports all 538 real comments: nothing lost, nothing mangled, FIX:/BUG: ignored, a slug collision suffixed', () => {
    const rows = ['comments.newest-73fd2a9.jsonl', 'comments.largest-d298489.jsonl'].flatMap((f) =>
      readFileSync(join(FIXTURES, 'knowledge', f), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { issue_id: string; text: string; created_at: string }),
    );
    expect(rows).toHaveLength(538);
    const root = tempProject();
    const r = capture(root, JSON.stringify(rows), ['--from-bd-json', '--json', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { captured: { key: string; status: string }[]; ignored: number };
    expect(out.ignored).toBe(2);
    expect(out.captured.filter((c) => c.status === 'added')).toHaveLength(536);
    expect(out.captured.filter((c) => c.key.endsWith('-2')).map((c) => c.key)).toEqual([
      'fact-medsimples-post-token-uses-oauth2passwordrequestform-http-2',
    ]);
    const log = logOf(root) as { content: string; bead: string; ts: number }[];
    expect(log).toHaveLength(536);
    const typed = rows.filter((row) => !/^(FIX|BUG):/.test(row.text));
    typed.forEach((row, i) => {
      const content = row.text.replace(/^[A-Z-]+:\s*/, '').trim();
      expect(log[i].bead).toBe(row.issue_id);
      expect(log[i].ts).toBe(Date.parse(row.created_at) / 1000);
      // the one comment that quotes role markers loses them (SPEC §4.6); every other is kept exactly
      if (/SYSTEM:\/ASSISTANT:/.test(content))
        expect(log[i].content).toBe(content.replace('(SYSTEM:/ASSISTANT:/[INST])', '(//)').replace(/<untrusted-knowledge>\s*/g, ''));
      else expect(log[i].content).toBe(content);
    });
    const all = log.map((e) => e.content).join('\n');
    for (const ch of ['é', '—', '→', 'ã', 'ç']) expect(all).toContain(ch);
  });
});
