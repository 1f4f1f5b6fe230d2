import { describe } from 'vitest';
import { commonScenarios, type Host } from './scenarios.js';
import { runClaude } from './session.js';

// Claude Code, the version pinned in test/hosts/package.json, driven in print mode (`claude -p`).
const claude: Host = { name: 'claude', run: runClaude };

describe('Claude Code (real client)', () => {
  commonScenarios(claude);
});
