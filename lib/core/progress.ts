// Drawn by lib/cli/progress.ts.

/** Called often: must be cheap. */
export type Progress = (done: number, total: number) => void;

export const NO_PROGRESS: Progress = () => {};

export const CLEAR_LINE = '\r\x1b[K';

/** A diagnostic clears it first. */
export const progressShown = { now: false };
