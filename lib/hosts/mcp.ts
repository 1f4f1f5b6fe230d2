import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { CairnError, describeError } from '../core/errors.js';
import { asObject, type Json } from '../core/json.js';
import { writeFileAtomic } from '../io/atomic.js';
import { readSmallFile } from '../io/read.js';
import type { Check } from '../store/health.js';
import { hostPath, resolveProgram } from './check.js';
import { appendTomlTable, readTomlTable, tomlTableState } from './toml.js';
import { commandProgram, dirFlag, executableCommand, GIT_TOP_LEVEL, readSettings, updateSettings } from './settings.js';

// `cairn mcp` in each host's MCP configuration, merged as the hook settings are; formats and sources in hooks/README.md.

export const MCP_HOSTS = ['claude', 'codex', 'gemini', 'cursor', 'opencode'] as const;
export type McpHost = (typeof MCP_HOSTS)[number];

/** Run without a shell. */
export interface ServerCommand {
  command: string;
  args: string[];
}

interface McpConfig {
  file: string;
  note?: string;
  /** Read in its place; cairn does not edit it (JSON with comments). */
  instead?: string;
  /** Shows that a project uses the host (`cairn init --mcp` with no host named). */
  markers: string[];
  /** TOML: the `mcp_servers` table. */
  key: string;
  base?: Json;
  entry(c: ServerCommand): Json;
  /** Undefined when it names none. */
  command(entry: Json): ServerCommand | undefined;
}

const strings = (v: unknown) => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined);
const commandAndArgs = (entry: Json) => {
  if (typeof entry.command !== 'string') return undefined;
  return { command: entry.command, args: strings(entry.args) ?? [] };
};

export const MCP_CONFIGS: Record<McpHost, McpConfig> = {
  claude: {
    file: '.mcp.json',
    note: "Claude Code asks once before it starts a project's .mcp.json servers (/mcp lists them)",
    markers: ['.mcp.json', '.claude', 'CLAUDE.md'],
    key: 'mcpServers',
    entry: (c) => ({ type: 'stdio', command: c.command, args: c.args }),
    command: commandAndArgs,
  },
  codex: {
    file: '.codex/config.toml',
    note: "Codex reads a project's .codex/config.toml once you trust the project",
    markers: ['.codex'],
    key: 'mcp_servers',
    entry: (c) => ({ ...c }),
    command: commandAndArgs,
  },
  gemini: {
    file: '.gemini/settings.json',
    markers: ['.gemini', 'GEMINI.md'],
    key: 'mcpServers',
    entry: (c) => ({ command: c.command, args: c.args }),
    command: commandAndArgs,
  },
  cursor: {
    file: '.cursor/mcp.json',
    note: 'Cursor lists it in its MCP settings, where a new server is switched on',
    markers: ['.cursor'],
    key: 'mcpServers',
    entry: (c) => ({ command: c.command, args: c.args }),
    command: commandAndArgs,
  },
  opencode: {
    file: 'opencode.json',
    instead: 'opencode.jsonc',
    markers: ['opencode.json', 'opencode.jsonc', '.opencode'],
    key: 'mcp',
    base: { $schema: 'https://opencode.ai/config.json' },
    entry: (c) => ({ type: 'local', command: [c.command, ...c.args], enabled: true }),
    command: (entry) => {
      const line = strings(entry.command);
      return line?.length ? { command: line[0], args: line.slice(1) } : undefined;
    },
  },
};

const SERVER_NAME = 'cairn';
const TOML_PATH = ['mcp_servers', SERVER_NAME];

export function mcpHostsFound(root: string): McpHost[] {
  return MCP_HOSTS.filter((h) => MCP_CONFIGS[h].markers.some((m) => existsSync(join(root, m))));
}

/** No shell and no project variable: a project-local install is found through git by `sh -c`. */
export function serverCommand(root: string, storeDir?: string): ServerCommand {
  const program = executableCommand(root, { projectDir: GIT_TOP_LEVEL }, 'cairn');
  const dir = storeDir === undefined ? [] : ['--dir', storeDir];
  if (program === 'cairn') return { command: 'cairn', args: ['mcp', ...dir] };
  return { command: 'sh', args: ['-c', `exec ${program} mcp${dirFlag(storeDir)}`] };
}

/** `added` is false when an entry named cairn was there already. */
export function registerMcp(root: string, host: McpHost, storeDir?: string): { path: string; added: boolean } {
  const config = MCP_CONFIGS[host];
  const entry = config.entry(serverCommand(root, storeDir));
  if (config.instead && existsSync(join(root, config.instead)) && !existsSync(join(root, config.file))) {
    const by = `add "cairn": ${JSON.stringify(entry)} to its "${config.key}" by hand`;
    const whose = `${config.instead} holds this project's settings (JSON with comments: cairn does not edit it)`;
    throw new CairnError('input', `${whose}; ${by}`);
  }
  if (host === 'codex') return registerToml(root, config.file, entry as unknown as ServerCommand);
  let added = false;
  const path = updateSettings(root, config.file, config.base, (settings) => {
    const servers = settings[config.key];
    if (servers !== undefined && asObject(servers) === null) {
      throw new CairnError('input', `${join(root, config.file)}: "${config.key}" is not an object; left as it is`);
    }
    if (asObject(servers)?.[SERVER_NAME] !== undefined) return undefined;
    added = true;
    return { ...settings, [config.key]: { ...asObject(servers), [SERVER_NAME]: entry } };
  });
  return { path, added };
}

const TOML_CAP = 4 * 1024 * 1024;

function registerToml(root: string, file: string, c: ServerCommand): { path: string; added: boolean } {
  const path = join(root, file);
  const text = readSmallFile(path, TOML_CAP)?.toString('utf8') ?? '';
  let state;
  try {
    state = tomlTableState(text, TOML_PATH);
  } catch (err) {
    throw new CairnError('input', `${path}: ${describeError(err)}; left as it is`);
  }
  if (state === 'present') return { path, added: false };
  if (state === 'blocked') {
    const why = 'mcp_servers is an inline table or an array of tables there, which [mcp_servers.cairn] cannot extend';
    throw new CairnError('input', `${path}: ${why}; left as it is`);
  }
  writeFileAtomic(path, appendTomlTable(text, TOML_PATH, { command: c.command, args: c.args }), root);
  return { path, added: true };
}

/** 'absent' when the host's file names no server cairn, or why it cannot be read. */
export function registeredServer(root: string, host: McpHost): ServerCommand | 'absent' | { problem: string } {
  const config = MCP_CONFIGS[host];
  const path = join(root, config.file);
  if (!existsSync(path)) return 'absent';
  try {
    if (host === 'codex') {
      const text = readSmallFile(path, TOML_CAP)?.toString('utf8') ?? '';
      const table = readTomlTable(text, TOML_PATH);
      if (table) return commandAndArgs(table as Json) ?? { problem: `${config.file}: [mcp_servers.cairn] names no command` };
      if (tomlTableState(text, TOML_PATH) === 'absent') return 'absent';
      return { problem: `${config.file}: cairn's server is written in a form cairn does not read back` };
    }
    const entry = asObject(readSettings(path)[config.key])?.[SERVER_NAME];
    if (entry === undefined) return 'absent';
    const command = asObject(entry) && config.command(asObject(entry)!);
    return command || { problem: `${config.file}: the cairn server names no command` };
  } catch (err) {
    return { problem: describeError(err) };
  }
}

/** For `sh -c 'exec PROGRAM …'`, PROGRAM. */
export function serverProgram(c: ServerCommand): string {
  const shell = basename(c.command) === 'sh' && c.args[0] === '-c' && c.args[1];
  if (shell) return commandProgram(shell.replace(/^\s*exec\s+/, ''));
  return c.command;
}

export function mcpCheck(root: string, host: McpHost, env: NodeJS.ProcessEnv = process.env): Check {
  const name = `mcp: ${host}`;
  const file = MCP_CONFIGS[host].file;
  const server = registeredServer(root, host);
  if (server === 'absent') return { name, status: 'off', detail: `${file}: no cairn mcp (cairn init --${host} --mcp)` };
  if ('problem' in server) return { name, status: 'fail', detail: server.problem };
  const program = serverProgram(server);
  if (resolveProgram(program, root, { ...env, PATH: hostPath(env) }) === null) {
    const remedy = program.includes('/node_modules/.bin/') ? 'npm install here' : 'install cairn';
    return { name, status: 'fail', detail: `${file}: '${program}' is not found (${remedy})` };
  }
  return { name, status: 'ok', detail: `${file}: ${[server.command, ...server.args].join(' ')}` };
}
