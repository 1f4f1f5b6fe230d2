import { describe, expect, it } from 'vitest';
import { codexHookTrust } from '../helpers.js';
import { brokenStoreScenarios, check, commonScenarios, initialised, injected, session } from './scenarios.js';
import type { Host } from './scenarios.js';
import { addCodexConfig, codexHome, doctor, knowledge, runCodex, type Project } from './session.js';
import { FENCE_OPEN } from '../../lib/knowledge/auto-recall.js';

// Codex CLI, the version pinned in test/hosts/package.json, driven by `codex exec` with the mock as a
// custom model provider. The common scenarios pass --dangerously-bypass-hook-trust (they are about
// something else); trust itself is tested below, without it.
const codex: Host = { name: 'codex', run: runCodex };

describe('Codex CLI (real client)', () => {
  commonScenarios(codex);
  brokenStoreScenarios(codex);

  it('runs a project’s hooks only once it trusts the project and each hook, skipping them without a word until then; cairn doctor says what to do at each step', async () => {
    const project: Project = initialised(codex);
    const comment = (n: number) => [`bd comments add cairn-${n} "LEARNED: trusted hooks capture number ${n}"`];
    const hooks = () => check(doctor(project, { env: { CODEX_HOME: codexHome(project) } }).checks, 'hooks: codex');

    await session(codex, project, comment(1), { trustProject: false, bypassHookTrust: false });
    expect(knowledge(project.root)).toEqual([]);
    expect(hooks()).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('Codex does not trust this project yet'),
    });

    await session(codex, project, comment(2), { bypassHookTrust: false });
    expect(knowledge(project.root)).toEqual([]);
    expect(hooks()).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining("Codex has not trusted cairn's SessionStart, PostToolUse hook(s)"),
    });

    // trusted as /hooks records it, by the hash cairn computes: the real client runs them
    addCodexConfig(project, codexHookTrust(project.root));
    await session(codex, project, comment(3), { bypassHookTrust: false });
    expect(knowledge(project.root).map((e) => e.bead)).toEqual(['cairn-3']);
    const { mock } = await session(codex, project, [], { bypassHookTrust: false });
    expect(injected(mock)).toContain(FENCE_OPEN);
    expect(hooks()).toMatchObject({ status: 'ok' });
  });
});
