// Progress of long work: the library calls a Progress; lib/cli/progress.ts draws it, on a terminal only.

/** `done` of `total` units of work (lines, entries, bytes) are behind; called often, it must be cheap. */
export type Progress = (done: number, total: number) => void;

export const NO_PROGRESS: Progress = () => {};

export const CLEAR_LINE = '\r\x1b[K';

/** Whether a progress line stands on the terminal now: a diagnostic then clears it first (lib/core/logger.ts). */
export const progressShown = { now: false };
