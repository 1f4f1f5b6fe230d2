// How a process started to apply a kept run (lib/store/deferred.ts) learns where its request is: set by
// `cairn rebuild --continue` for the writer it starts (and never passed on to work started in the
// background), read by the runner and by a hook's gate, which must let such a run through without a
// payload on stdin. Its own module: the gate loads no store code.

export const DEFERRED_ENV = 'CAIRN_DEFERRED';
