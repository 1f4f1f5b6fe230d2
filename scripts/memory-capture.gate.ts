import type { GatePassed } from '../lib/cli/runner.js';
import { hookGate } from '../lib/cli/gate.js';
import { HOOK_DEADLINE_MS } from '../lib/core/deadline.js';
import { mayCapture } from '../lib/knowledge/bd-command.js';

// memory-capture runs after every shell command an agent makes, and almost none adds a bd comment
// (SPEC §4.2): this gate is the hook's bundle, and the runner and the capture code load only when it
// passes (tools/bundle.js). Import nothing here that loads the store or SQLite.

/** Undefined: the payload adds no comment and the process ends; else what the command's runner takes over. */
export function gate(argv: string[]): Promise<GatePassed | undefined> {
  // keepsRuns: a capture is kept with its payload, whatever the deadline (lib/store/deferred.ts)
  return hookGate(argv, HOOK_DEADLINE_MS, mayCapture, true);
}
