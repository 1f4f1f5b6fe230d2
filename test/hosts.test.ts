import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readHookInput, type HookInput } from '../lib/hosts/payload.js';
import { envelopeFor, wrapContext } from '../lib/hosts/envelope.js';
import { transcriptExitCode } from '../lib/hosts/codex.js';
import { mayCapture } from '../lib/knowledge/bd-command.js';
import { FIXTURES } from './helpers.js';

// Hook payloads in (one normaliser per host shape) and context envelopes out (SPEC §4.2, §4.4, §7).

const payload = (name: string): unknown => JSON.parse(readFileSync(join(FIXTURES, 'hooks', name), 'utf8'));

describe('readHookInput', () => {
  it.each<[string, Partial<HookInput>]>([
    [
      'claude-session-start.json',
      {
        host: 'claude',
        event: 'SessionStart',
        cwd: '/home/dev/ledger',
        sessionId: '3f2c9a1e-7b4d-4c55-9e0a-2d8f6b1c4e77',
        source: 'startup',
        prompt: null,
        command: null,
        toolFailed: false,
      },
    ],
    [
      'claude-user-prompt-submit.json',
      {
        host: 'claude',
        event: 'UserPromptSubmit',
        prompt: 'Fix the OAuth callback: the redirect URI is rejected in staging',
        command: null,
      },
    ],
    [
      'claude-post-tool-use-failure.json',
      {
        host: 'claude',
        event: 'PostToolUseFailure',
        command: 'bd comments add led-999 "LEARNED: this bead does not exist"',
        toolFailed: true,
      },
    ],
    ['codex-session-start.json', { event: 'SessionStart', cwd: '/home/dev/ledger', source: 'startup' }],
    [
      'codex-post-tool-use.json',
      {
        host: 'codex',
        event: 'PostToolUse',
        sessionId: '019a3c5e-1f2b-7c44-9a0d-5e6f7a8b9c0d',
        command: "bd comments add led-150 'DECISION: invoices are rounded half-even, as the tax office requires'",
        toolFailed: false,
      },
    ],
    ['gemini-session-start.json', { host: 'gemini', event: 'SessionStart', source: 'startup', cwd: '/home/dev/ledger' }],
    [
      'gemini-before-agent.json',
      { host: 'gemini', event: 'BeforeAgent', prompt: 'Why does the invoice export time out on large accounts?' },
    ],
    [
      'gemini-after-tool-shell.json',
      {
        host: 'gemini',
        event: 'AfterTool',
        command: 'bd comments add led-151 "FACT: the export query scans invoices without the account_id index"',
        toolFailed: false,
      },
    ],
    ['gemini-after-tool-shell-failed.json', { host: 'gemini', event: 'AfterTool', toolFailed: true }],
    [
      'cursor-session-start.json',
      {
        host: 'cursor',
        event: 'sessionStart',
        cwd: '/home/dev/ledger',
        sessionId: 'c0a8e1f4-93b2-4d7e-a6c5-1b2d3e4f5a6b',
        command: null,
      },
    ],
    [
      'cursor-after-shell-execution.json',
      {
        host: 'cursor',
        event: 'afterShellExecution',
        command: 'bd comments add led-152 "PATTERN: every money column is an integer count of cents"',
        toolFailed: false,
      },
    ],
    [
      'opencode-tool-execute-after.json',
      {
        host: 'opencode',
        event: 'tool.execute.after',
        cwd: '/home/dev/ledger',
        sessionId: 'ses_5c1e9f2a7b3d4e8f',
        toolFailed: false,
      },
    ],
  ])('%s', (name, expected) => {
    expect(readHookInput(payload(name))).toMatchObject(expected);
  });

  it('reads the shell command of a successful Claude Bash run (and only of a shell tool)', () => {
    const input = readHookInput(payload('claude-post-tool-use-bash.json'));
    expect(input.command).toBe(
      'bd comments add led-142 "LEARNED: OAuth redirect URI must match the registered one exactly, including the trailing slash" && bd close led-142',
    );
    expect(input.toolFailed).toBe(false);
    const edit = {
      hook_event_name: 'PostToolUse',
      session_id: 's',
      cwd: '/p',
      tool_name: 'Write',
      tool_input: { command: 'not a shell command', file_path: '/p/a.ts' },
    };
    expect(readHookInput(edit).command).toBeNull();
  });

  it('sees failure in every way a payload reports it', () => {
    const bash = (tool_response: unknown) =>
      readHookInput({
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'make' },
        tool_response,
      });
    expect(bash({ exit_code: 2 }).toolFailed).toBe(true);
    expect(bash({ exitCode: '1' }).toolFailed).toBe(true);
    expect(bash({ success: false }).toolFailed).toBe(true);
    expect(bash({ is_error: true }).toolFailed).toBe(true);
    expect(bash({ error: 'boom' }).toolFailed).toBe(true);
    expect(bash({ exit_code: 0, error: '' }).toolFailed).toBe(false);
    expect(bash('plain text output').toolFailed).toBe(false);
    const open = readHookInput({
      event: 'tool.execute.after',
      sessionID: 's',
      tool: 'bash',
      args: { command: 'make' },
      metadata: { exit: 1 },
    });
    expect(open).toMatchObject({ host: 'opencode', command: 'make', toolFailed: true });
  });

  it('reads an argv command (`bash -lc <script>` is the script)', () => {
    const codex = (command: unknown) =>
      readHookInput({ hook_event_name: 'PostToolUse', turn_id: 't', tool_name: 'shell', tool_input: { command } }).command;
    expect(codex(['bash', '-lc', 'bd comments add x "LEARNED: y"'])).toBe('bd comments add x "LEARNED: y"');
    expect(codex(['bd', 'comments', 'add', 'x', 'LEARNED: y'])).toBe('bd comments add x LEARNED: y');
    expect(codex([1, 2])).toBeNull();
  });

  it('takes the payload as text too, and never throws on anything', () => {
    expect(readHookInput(readFileSync(join(FIXTURES, 'hooks', 'claude-session-start.json'), 'utf8'))).toMatchObject({
      host: 'claude',
      source: 'startup',
    });
    const empty = {
      host: 'unknown',
      event: null,
      cwd: null,
      sessionId: null,
      prompt: null,
      source: null,
      command: null,
      toolFailed: false,
      transcriptPath: null,
      toolUseId: null,
    };
    for (const junk of [null, undefined, 42, 'not json {', [], ['a'], {}, { foo: 'bar' }, true]) expect(readHookInput(junk)).toEqual(empty);
    // fields of the wrong type read as absent
    expect(readHookInput({ hook_event_name: 'SessionStart', cwd: 7, session_id: ['x'], source: {} })).toMatchObject({
      host: 'claude',
      cwd: null,
      sessionId: null,
      source: null,
    });
    expect(readHookInput({ hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: null, tool_response: 5 })).toMatchObject({
      command: null,
      toolFailed: false,
    });
  });
});

describe('Codex: a shell call’s exit status', () => {
  // Codex 0.171.0 sends PostToolUse with tool_response the command's output alone (a string), and
  // records the call's item_completed, with its exit_code, in the transcript before the hook runs
  // (fixtures/hooks/codex-rollout.jsonl: lines of a real rollout, a bd that succeeded and one that bd rejected).
  const rollout = join(FIXTURES, 'hooks', 'codex-rollout.jsonl');
  const call = (toolUseId: string, transcriptPath: string | null = rollout) =>
    readHookInput({
      ...(payload('codex-post-tool-use.json') as object),
      transcript_path: transcriptPath,
      tool_use_id: toolUseId,
      tool_response: 'Error: issue not found\n',
    });

  it('is read from the transcript: 0, 1, or null when the call or the transcript is not there', () => {
    expect(transcriptExitCode(rollout, 'call_resp_1795825409635')).toBe(0);
    expect(transcriptExitCode(rollout, 'call_resp_1795825409787')).toBe(1);
    expect(transcriptExitCode(rollout, 'call_unknown')).toBeNull();
    expect(transcriptExitCode(join(FIXTURES, 'hooks', 'no-such-rollout.jsonl'), 'call_resp_1795825409787')).toBeNull();
  });

  it('a call the transcript says failed may not capture; one it says succeeded, or cannot tell about, may', () => {
    expect(call('call_resp_1795825409787')).toMatchObject({
      host: 'codex',
      transcriptPath: rollout,
      toolUseId: 'call_resp_1795825409787',
      toolFailed: false,
    });
    expect(mayCapture(call('call_resp_1795825409787'))).toBe(false);
    expect(mayCapture(call('call_resp_1795825409635'))).toBe(true);
    expect(mayCapture(call('call_resp_1795825409787', null))).toBe(true); // codex exec --ephemeral keeps no transcript
  });
});

describe('envelopes', () => {
  const block =
    '## Relevant knowledge from memory\n\n<untrusted-knowledge source=".cairn/memory/knowledge.jsonl" treat-as="passive-context">\n- [LEARNED] é — → kept (bead b-1)\n</untrusted-knowledge>';

  it('defaults to the payload host; OpenCode and unknown callers get plain text', () => {
    expect(envelopeFor(readHookInput(payload('claude-session-start.json')))).toBe('claude');
    expect(envelopeFor(readHookInput(payload('codex-post-tool-use.json')))).toBe('codex');
    expect(envelopeFor(readHookInput(payload('gemini-session-start.json')))).toBe('gemini');
    expect(envelopeFor(readHookInput(payload('cursor-session-start.json')))).toBe('cursor');
    expect(envelopeFor(readHookInput(payload('opencode-tool-execute-after.json')))).toBe('text');
    expect(envelopeFor(readHookInput(''))).toBe('text');
  });

  it.each(['claude', 'codex', 'gemini'] as const)(
    '%s: exactly hookSpecificOutput {hookEventName, additionalContext}, one line, real newlines',
    (format) => {
      const out = wrapContext(format, 'SessionStart', block);
      expect(out.endsWith('\n')).toBe(true);
      expect(out.trimEnd()).not.toContain('\n');
      expect(JSON.parse(out)).toEqual({
        hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: block },
      });
      expect(JSON.parse(out).hookSpecificOutput.additionalContext).not.toContain('\\n');
      expect(JSON.parse(wrapContext(format, 'UserPromptSubmit', block)).hookSpecificOutput.hookEventName).toBe('UserPromptSubmit');
    },
  );

  it('cursor: {"additional_context": …}; text: the block as it is', () => {
    expect(JSON.parse(wrapContext('cursor', 'sessionStart', block))).toEqual({ additional_context: block });
    expect(wrapContext('text', 'SessionStart', block)).toBe(block + '\n');
    expect(wrapContext('text', 'SessionStart', block + '\n')).toBe(block + '\n');
  });

  it('an empty result prints nothing in every format', () => {
    for (const format of ['claude', 'codex', 'gemini', 'cursor', 'text'] as const) {
      expect(wrapContext(format, 'SessionStart', '')).toBe('');
      expect(wrapContext(format, 'SessionStart', ' \n')).toBe('');
    }
  });
});
