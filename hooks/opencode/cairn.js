// cairn for OpenCode (opencode.ai/docs/plugins): copy to .opencode/plugins/cairn.js in a project, or
// to ~/.config/opencode/plugins/ for every project. OpenCode has no command hooks, so this plugin
// calls cairn's executables the way the other hosts' hooks do:
//   session.created             → auto-recall --format text; the block is added to the system prompt
//   bash tool, after it has run → memory-capture (not awaited: the agent never waits on it)
// It expects auto-recall and memory-capture on PATH (npm install -g cairn), or in the project's
// node_modules/.bin. Every failure is silent here: cairn itself reports through `cairn doctor`.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const TIMEOUT_MS = 10_000;

/** Run a cairn executable with `payload` as JSON on stdin; resolves to its stdout ('' on any failure). */
function runCairn(name, args, payload, directory) {
  const local = join(directory, 'node_modules', '.bin', name);
  return new Promise((resolve) => {
    let out = '';
    let child;
    try {
      child = spawn(existsSync(local) ? local : name, args, {
        cwd: directory,
        stdio: ['pipe', 'pipe', 'ignore'],
        timeout: TIMEOUT_MS,
      });
    } catch {
      resolve('');
      return;
    }
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', () => resolve(''));
    child.on('close', (code) => resolve(code === 0 ? out : ''));
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

export const CairnPlugin = async ({ directory }) => {
  const recalled = new Map(); // session id → the knowledge block for it
  let latest = '';
  const argsByCall = new Map(); // bash call id → its arguments (older OpenCode passes them only before the run)

  return {
    event: async ({ event }) => {
      if (event?.type !== 'session.created') return;
      const sessionID = event.properties?.info?.id ?? event.properties?.sessionID ?? null;
      const text = (
        await runCairn('auto-recall', ['--format', 'text'], { event: 'session.created', sessionID, directory }, directory)
      ).trim();
      if (!text) return;
      latest = text;
      if (sessionID) recalled.set(sessionID, text);
    },
    'experimental.chat.system.transform': async (input, output) => {
      const text = recalled.get(input?.sessionID) ?? latest;
      if (text && Array.isArray(output?.system)) output.system.push(text);
    },
    'tool.execute.before': async (input, output) => {
      if (input?.tool === 'bash') argsByCall.set(input.callID, output?.args);
    },
    'tool.execute.after': async (input, output) => {
      if (input?.tool !== 'bash') return;
      const args = input.args ?? argsByCall.get(input.callID);
      argsByCall.delete(input.callID);
      void runCairn(
        'memory-capture',
        [],
        {
          event: 'tool.execute.after',
          sessionID: input.sessionID,
          directory,
          tool: 'bash',
          args,
          metadata: { exit: output?.metadata?.exit },
        },
        directory,
      );
    },
  };
};
