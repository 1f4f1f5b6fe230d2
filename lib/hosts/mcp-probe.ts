import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describeError } from '../core/errors.js';
import type { Check } from '../store/health.js';
import { hostPath } from './check.js';
import type { ServerCommand } from './mcp.js';

// Doctor starts the registered server as a host would: initialize, then tools/list, within a deadline.

const PROBE_MS = 10_000;

export async function probeServer(root: string, server: ServerCommand, env = process.env, deadlineMs = PROBE_MS) {
  const name = 'mcp: server';
  const result = (status: Check['status'], detail: string): Check => ({ name, status, detail });
  const started = Date.now();
  const entries = Object.entries({ ...env, PATH: hostPath(env) });
  const defined = entries.filter((e): e is [string, string] => e[1] !== undefined);
  const childEnv = Object.fromEntries(defined);
  const transport = new StdioClientTransport({ ...server, cwd: root, env: childEnv, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: 'cairn-doctor', version: '1' });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${deadlineMs} ms`)), deadlineMs);
  });
  try {
    const { tools } = await Promise.race([client.connect(transport).then(() => client.listTools()), deadline]);
    const ms = Date.now() - started;
    const names = tools.map((t) => t.name).join(', ');
    return result('ok', `answers initialize and tools/list (${names}) in ${ms} ms`);
  } catch (err) {
    const said = stderr.trim().split('\n').pop();
    const line = [server.command, ...server.args].join(' ');
    const heard = said ? ` (it said: ${said.slice(0, 200)})` : '';
    return result('fail', `${line}: ${describeError(err)}${heard}`);
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined); // ends the server: its stdin closes
  }
}
