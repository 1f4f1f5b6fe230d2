import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MCP_CONFIGS, MCP_HOSTS, registeredServer, serverCommand, serverProgram, type McpHost } from '../lib/hosts/mcp.js';
import { appendTomlTable, readTomlTable, tomlString, tomlTableState } from '../lib/hosts/toml.js';
import { binPath, run, tempProject } from './helpers.js';

// `cairn init --mcp` registers `cairn mcp` in each host's MCP configuration, merged as the hook
// settings are; `cairn doctor` checks the registration and starts the server.

/** What a user already has in each host's file: another server, and settings of their own. */
const USER_FILES: Record<McpHost, string> = {
  claude: JSON.stringify({ mcpServers: { github: { type: 'http', url: 'https://api.githubcopilot.com/mcp/' } } }, null, 2) + '\n',
  codex: [
    '# my Codex settings',
    'model = "o3" # the default',
    'notes = """',
    '[mcp_servers.cairn]',
    'is only text here"""',
    '',
    '[mcp_servers.docs]',
    'command = "npx"',
    'args = [',
    '  "-y", # the package',
    '  "docs-mcp",',
    ']',
    'env = { TOKEN_FILE = "~/.docs]token" }',
    '',
    '[profiles.fast]',
    "model = 'o4-mini'",
  ].join('\n'),
  gemini:
    JSON.stringify({ theme: 'GitHub', mcpServers: { search: { command: 'search-mcp', args: ['--stdio'], trust: false } } }, null, 4) + '\n',
  cursor: JSON.stringify({ mcpServers: { figma: { url: 'http://127.0.0.1:3845/sse' } } }, null, 2) + '\n',
  opencode:
    JSON.stringify(
      {
        $schema: 'https://opencode.ai/config.json',
        theme: 'opencode',
        mcp: { sentry: { type: 'remote', url: 'https://mcp.sentry.dev/mcp' } },
      },
      null,
      2,
    ) + '\n',
};

/** The user's own servers and settings, read back from a host's file (Gemini's holds --gemini's hooks too). */
function userPart(host: McpHost, text: string): unknown {
  if (host === 'codex') return readTomlTable(text, ['mcp_servers', 'docs']);
  const { [MCP_CONFIGS[host].key]: servers, hooks: _hooks, ...rest } = JSON.parse(text);
  const { cairn: _cairn, ...others } = servers;
  return { rest, others };
}

/** A TOML document as Python's tomllib (a complete TOML 1.0 parser) reads it, as JSON. */
function parseToml(text: string): unknown {
  const r = spawnSync('python3', ['-c', 'import sys, json, tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))'], {
    input: text,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`tomllib: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
const hasTomllib = spawnSync('python3', ['-c', 'import tomllib']).status === 0;

describe('cairn init --mcp', () => {
  for (const host of MCP_HOSTS) {
    it(`${host}: keeps the user's other servers and settings; twice changes nothing`, () => {
      const root = tempProject({ init: false });
      const file = join(root, MCP_CONFIGS[host].file);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, USER_FILES[host]);
      const r = run('cairn', ['init', '--mcp', `--${host}`], { cwd: root });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`  mcp     ${MCP_CONFIGS[host].file}: cairn mcp registered`);
      const text = readFileSync(file, 'utf8');
      expect(userPart(host, text)).toEqual(userPart(host, USER_FILES[host]));
      expect(registeredServer(root, host)).toEqual({ command: 'cairn', args: ['mcp'] });
      if (host === 'codex') expect(text.startsWith(USER_FILES.codex)).toBe(true); // appended: the user's text as it was
      const again = run('cairn', ['init', '--mcp', `--${host}`], { cwd: root });
      expect(again.stdout).toContain(`  mcp     ${MCP_CONFIGS[host].file}: already registered`);
      expect(readFileSync(file, 'utf8')).toBe(text);
    });
  }

  it.runIf(hasTomllib)('codex: the merged config.toml is valid TOML with both servers and every other setting', () => {
    const root = tempProject({ init: false });
    mkdirSync(join(root, '.codex'));
    writeFileSync(join(root, '.codex', 'config.toml'), USER_FILES.codex);
    run('cairn', ['init', '--mcp', '--codex'], { cwd: root });
    const before = parseToml(USER_FILES.codex) as { mcp_servers: Record<string, unknown> };
    const after = parseToml(readFileSync(join(root, '.codex', 'config.toml'), 'utf8')) as typeof before;
    expect(after).toEqual({
      ...before,
      mcp_servers: { ...before.mcp_servers, cairn: { command: 'cairn', args: ['mcp'] } },
    });
  });

  it('with no host named, registers with each host the project shows it uses, and says so when there is none', () => {
    const root = tempProject({ init: false });
    const none = run('cairn', ['init', '--mcp'], { cwd: root });
    expect(none.code).toBe(0);
    expect(none.stderr).toMatch(/no agent host found here to register cairn mcp with; name one: cairn init --mcp --claude/);
    mkdirSync(join(root, '.claude'));
    writeFileSync(join(root, 'GEMINI.md'), '# notes\n');
    const r = run('cairn', ['init', '--mcp'], { cwd: root });
    expect(r.stdout).toContain('  mcp     .mcp.json: cairn mcp registered');
    expect(r.stdout).toContain('  mcp     .gemini/settings.json: cairn mcp registered');
    expect(r.stdout).not.toContain('.codex');
    expect(r.stdout).toContain('git add .cairn .mcp.json .gemini/settings.json');
  });

  it('a file it cannot merge into is left as it is, and the other hosts are still set up', () => {
    const root = tempProject({ init: false });
    writeFileSync(join(root, '.mcp.json'), '{"mcpServers": [');
    mkdirSync(join(root, '.codex'));
    const inline = 'mcp_servers = { docs = { command = "npx" } }\n';
    writeFileSync(join(root, '.codex', 'config.toml'), inline);
    const r = run('cairn', ['init', '--mcp', '--claude', '--codex', '--cursor'], { cwd: root });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/claude \(mcp\): .*\.mcp\.json is not valid JSON/);
    expect(r.stderr).toMatch(/codex \(mcp\): .*mcp_servers is an inline table or an array of tables there/);
    expect(readFileSync(join(root, '.mcp.json'), 'utf8')).toBe('{"mcpServers": [');
    expect(readFileSync(join(root, '.codex', 'config.toml'), 'utf8')).toBe(inline);
    expect(registeredServer(root, 'cursor')).toEqual({ command: 'cairn', args: ['mcp'] });
    expect(run('cairn', ['init', '--mcp', '--claude', '--strict'], { cwd: root }).code).toBe(1);
  });

  it("OpenCode's opencode.jsonc (comments) is not edited: init says what to add", () => {
    const root = tempProject({ init: false });
    writeFileSync(join(root, 'opencode.jsonc'), '{\n  // mine\n  "theme": "opencode"\n}\n');
    const r = run('cairn', ['init', '--mcp', '--opencode'], { cwd: root });
    expect(r.stderr).toContain(
      'opencode (mcp): opencode.jsonc holds this project\'s settings (JSON with comments: cairn does not edit it); add "cairn": {"type":"local","command":["cairn","mcp"],"enabled":true} to its "mcp" by hand',
    );
    expect(readFileSync(join(root, 'opencode.jsonc'), 'utf8')).toContain('// mine');
    expect(() => readFileSync(join(root, 'opencode.json'))).toThrow();
  });

  it('a cairn entry the user wrote is theirs: left as it is', () => {
    const root = tempProject({ init: false });
    const own = { mcpServers: { cairn: { command: '/opt/cairn/bin/cairn', args: ['mcp', '--dir', '/srv/memory'] } } };
    writeFileSync(join(root, '.mcp.json'), JSON.stringify(own));
    expect(run('cairn', ['init', '--mcp', '--claude'], { cwd: root }).stdout).toContain('.mcp.json: already registered');
    expect(JSON.parse(readFileSync(join(root, '.mcp.json'), 'utf8'))).toEqual(own);
  });

  it('--opencode is for the MCP server: alone it says how OpenCode takes cairn', () => {
    const r = run('cairn', ['init', '--opencode', '--strict'], { cwd: tempProject({ init: false }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /OpenCode takes cairn as a plugin \(hooks\/opencode\/cairn\.js\) and as an MCP server: cairn init --opencode --mcp/,
    );
  });
});

describe('the server command', () => {
  it('runs cairn from the project when it is a dev dependency there (through git, as the hooks), else from PATH', () => {
    const root = tempProject({ init: false });
    expect(serverCommand(root)).toEqual({ command: 'cairn', args: ['mcp'] });
    expect(serverCommand(root, '/srv/shared memory')).toEqual({
      command: 'cairn',
      args: ['mcp', '--dir', '/srv/shared memory'],
    });
    mkdirSync(join(root, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(binPath('cairn'), join(root, 'node_modules', '.bin', 'cairn'));
    const local = serverCommand(root, '/srv/shared memory');
    expect(local).toEqual({
      command: 'sh',
      args: ['-c', `exec "$(git rev-parse --show-toplevel)"/node_modules/.bin/cairn mcp --dir '/srv/shared memory'`],
    });
    expect(serverProgram(local)).toBe('$(git rev-parse --show-toplevel)/node_modules/.bin/cairn');
  });
});

describe('cairn doctor and cairn mcp', () => {
  it('checks the registration, starts the registered server and sees it answer initialize and tools/list', () => {
    const root = tempProject({ init: false });
    expect(spawnSync('git', ['init', '-q'], { cwd: root }).status).toBe(0);
    mkdirSync(join(root, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(binPath('cairn'), join(root, 'node_modules', '.bin', 'cairn'));
    expect(run('cairn', ['init', '--mcp', '--claude', '--opencode'], { cwd: root }).code).toBe(0);
    const r = run('cairn', ['doctor', '--json'], { cwd: root });
    const checks = JSON.parse(r.stdout).checks as { name: string; status: string; detail: string }[];
    const mcp = checks.filter((c) => c.name.startsWith('mcp'));
    expect(mcp.map((c) => [c.name, c.status])).toEqual([
      ['mcp: claude', 'ok'],
      ['mcp: opencode', 'ok'],
      ['mcp: server', 'ok'], // one start: both register the same command
    ]);
    expect(mcp[2].detail).toMatch(/^answers initialize and tools\/list \(recall, remember, patterns, explain, landings\) in \d+ ms$/);
  });

  it('says what is wrong: a program that is not there, a server that does not answer, and nothing registered', () => {
    const root = tempProject({ init: false });
    const doctor = () =>
      (
        JSON.parse(run('cairn', ['doctor', '--json'], { cwd: root }).stdout).checks as {
          name: string;
          status: string;
          detail: string;
        }[]
      ).filter((c) => c.name.startsWith('mcp'));
    expect(doctor()).toEqual([{ name: 'mcp', status: 'off', detail: 'no host registers cairn mcp (cairn init --mcp)' }]);
    writeFileSync(join(root, '.mcp.json'), JSON.stringify({ mcpServers: { cairn: { command: 'cairn', args: ['mcp'] } } }));
    writeFileSync(
      join(root, 'opencode.json'),
      JSON.stringify({ mcp: { cairn: { type: 'local', command: ['node', '-e', 'process.exit(3)'] } } }),
    );
    const [claude, opencode, server] = doctor();
    expect(claude).toEqual({
      name: 'mcp: claude',
      status: 'fail',
      detail: ".mcp.json: 'cairn' is not found (install cairn)",
    });
    expect(opencode.status).toBe('ok');
    expect(server.status).toBe('fail');
    expect(server.detail).toMatch(/^node -e process\.exit\(3\): .*[Cc]onnection closed/);
  });
});

describe('the TOML merge', () => {
  const path = ['mcp_servers', 'cairn'];

  it('finds the table however it is written, and never inside a string or a comment', () => {
    expect(tomlTableState('', path)).toBe('absent');
    expect(tomlTableState('[mcp_servers.cairn]\ncommand = "x"\n', path)).toBe('present');
    expect(tomlTableState('[ mcp_servers . "cairn" ] # mine\n', path)).toBe('present');
    expect(tomlTableState("[mcp_servers.'cairn'.env]\nA = '1'\n", path)).toBe('present');
    expect(tomlTableState('mcp_servers.cairn.command = "x"\n', path)).toBe('present');
    expect(tomlTableState('[mcp_servers]\ncairn = { command = "x" }\n', path)).toBe('present');
    expect(tomlTableState('# [mcp_servers.cairn]\nx = """\n[mcp_servers.cairn]\n"""\ny = \'[mcp_servers.cairn]\'\n', path)).toBe('absent');
    expect(tomlTableState('[mcp_servers]\ndocs = { command = "npx", args = ["a]", "b"] }\n', path)).toBe('absent');
    expect(tomlTableState('mcp_servers = { docs = { command = "npx" } }\n', path)).toBe('blocked');
    expect(tomlTableState('[[mcp_servers]]\nname = "docs"\n', path)).toBe('blocked');
    expect(() => tomlTableState('x = "open\n', path)).toThrow(/not valid TOML/);
    expect(() => tomlTableState('a = [1,\n', path)).toThrow(/not valid TOML/);
  });

  it('appends the table at the end, and reads back what it wrote', () => {
    const values = {
      command: 'sh',
      args: ['-c', 'exec "$(git rev-parse --show-toplevel)"/node_modules/.bin/cairn mcp', 'tab\there', 'del\x7f'],
    };
    const text = appendTomlTable('model = "o3"', path, values);
    expect(text).toBe(
      'model = "o3"\n\n[mcp_servers.cairn]\ncommand = "sh"\n' +
        'args = ["-c", "exec \\"$(git rev-parse --show-toplevel)\\"/node_modules/.bin/cairn mcp", "tab\\there", "del\\u007f"]\n',
    );
    expect(readTomlTable(text, path)).toEqual(values);
    expect(appendTomlTable('', path, { command: 'cairn' })).toBe('[mcp_servers.cairn]\ncommand = "cairn"\n');
    expect(tomlString('a"b\\c\n')).toBe('"a\\"b\\\\c\\n"');
  });

  it.runIf(hasTomllib)('writes what a TOML parser reads as written', () => {
    const values = {
      command: 'sh',
      args: ['-c', 'exec "$(git rev-parse --show-toplevel)"/node_modules/.bin/cairn mcp --dir \'/srv/a b\'', 'ünïcode ✓', 'del\x7f'],
    };
    for (const doc of ['', 'a = 1', USER_FILES.codex, '[mcp_servers]\nother = { command = "x" }\n', 'mcp_servers.docs.command = "npx"\n']) {
      const parsed = parseToml(appendTomlTable(doc, path, values)) as { mcp_servers: Record<string, unknown> };
      expect(parsed.mcp_servers.cairn, doc).toEqual(values);
    }
  });
});
