// How a process started to apply a kept run (lib/store/deferred.ts) learns where its request is: set by
// `cairn rebuild --continue` for the writer it starts (and never passed on to work started in the
// background), read by the runner and by a hook's gate, which must let such a run through without a
// payload on stdin. Its own module: the gate loads no store code. The exit codes are how such a run
// tells the applier what became of it (lib/cli/outcome.ts decides them).

export const DEFERRED_ENV = 'CAIRN_DEFERRED';

/** A replayed run met a passing failure again (EX_TEMPFAIL): its request waits for the next applier. */
export const DEFERRED_AGAIN = 75;
/** A replayed run ran out of its deadline: its request is set aside, not run again and again. */
export const DEFERRED_TOO_LONG = 76;
