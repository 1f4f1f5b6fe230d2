// How a writer started to apply a kept run finds its request; the gate loads no store code.

export const DEFERRED_ENV = 'CAIRN_DEFERRED';

/** EX_TEMPFAIL: the request waits for the next applier. */
export const DEFERRED_AGAIN = 75;
/** Out of its deadline: set aside, not retried forever. */
export const DEFERRED_TOO_LONG = 76;
