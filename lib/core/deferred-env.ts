// Where a writer that `cairn rebuild --continue` starts to apply a kept run (lib/store/deferred.ts) finds its
// request; read by the runner and a hook's gate, hence its own module (the gate loads no store code).
// lib/cli/outcome.ts decides the exit codes below.

export const DEFERRED_ENV = 'CAIRN_DEFERRED';

/** A replayed run met a passing failure again (EX_TEMPFAIL): its request waits for the next applier. */
export const DEFERRED_AGAIN = 75;
/** A replayed run ran out of its deadline: its request is set aside, not run again and again. */
export const DEFERRED_TOO_LONG = 76;
