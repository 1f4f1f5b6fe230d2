import type { GatePassed } from '../lib/cli/runner.js';
import { hookGate, storeFlags } from '../lib/cli/gate.js';
import { HOOK_DEADLINE_MS } from '../lib/core/deadline.js';
import type { HookInput } from '../lib/hosts/payload.js';
import { earlyBeadListing } from '../lib/knowledge/beads.js';

// auto-recall starts a session, and bd (SPEC §4.4) is most of its wait: this gate, the hook's bundle,
// reads the payload and starts the bd listings before the runner and the index code are loaded
// (tools/bundle.js). Import nothing here that loads the store or SQLite.

/** What the command's runner takes over: the deadline, stdin, and the bd listings already started. */
export async function gate(argv: string[]): Promise<GatePassed | undefined> {
  let input: HookInput | undefined;
  const passed = await hookGate(argv, HOOK_DEADLINE_MS, (payload) => ((input = payload), true));
  const flags = storeFlags(argv);
  if (passed && input && flags) passed.beads = earlyBeadListing(flags, input, passed.deadline);
  return passed;
}
