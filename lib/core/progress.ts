// How long work tells how far it has come: the library calls a Progress as it goes; the command line
// (lib/cli/progress.ts) draws it on a terminal and nowhere else.

/** `done` of `total` units of work (lines, entries, bytes) are behind; called often, it must be cheap. */
export type Progress = (done: number, total: number) => void;

/** Work nobody watches. */
export const NO_PROGRESS: Progress = () => {};

/** Back to the start of a terminal's line and clear it: the line is free for the next text. */
export const CLEAR_LINE = '\r\x1b[K';

/** Whether a progress line stands on the terminal now: a diagnostic then clears it first (lib/core/logger.ts). */
export const progressShown = { now: false };
