import { describe } from 'vitest';
import { commonScenarios, type Host } from './scenarios.js';
import { runGemini } from './session.js';

// Gemini CLI, the version pinned in test/hosts/package.json, in non-interactive mode (`gemini -p`)
// with an API key for the mock (GOOGLE_GEMINI_BASE_URL) and the project folder trusted. It hands a
// hook's context to the model inside <hook_context>, its angle brackets escaped. The broken stores are
// cairn's side alone, met the same way by every host: Claude Code and Codex run them.
const gemini: Host = {
  name: 'gemini',
  run: runGemini,
  shown: (text) => text.replace(/</g, '&lt;').replace(/>/g, '&gt;'),
};

describe('Gemini CLI (real client)', () => {
  commonScenarios(gemini);
});
