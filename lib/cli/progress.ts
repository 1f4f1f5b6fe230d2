import { CLEAR_LINE, NO_PROGRESS, progressShown, type Progress } from '../core/progress.js';

// A progress line on stderr, only at a terminal (hooks, cron and CI read stderr as a log); never fails the work.

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface ProgressOptions {
  bytes?: boolean;
  stream?: ProgressStream;
  now?: () => number;
  /** Shorter work shows no line (no flicker). */
  delayMs?: number;
  everyMs?: number;
}

export interface ProgressLine {
  update: Progress;
  end(): void;
}

const count = (n: number, bytes: boolean) => (bytes ? `${(n / 1e6).toFixed(1)} MB` : Math.round(n).toLocaleString('en'));

export function progressText(label: string, done: number, total: number, elapsedMs: number, bytes = false): string {
  const share = total > 0 ? ` (${Math.floor((100 * Math.min(done, total)) / total)}%)` : '';
  const parts = [`${label} ${count(done, bytes)} / ${count(total, bytes)}${share}`];
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  if (rate > 0) {
    parts.push(`${count(rate, bytes)}/s`);
    parts.push(`${formatDuration(Math.max(0, total - done) / rate)} left`);
  }
  return parts.join(' · ');
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.ceil(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function progressLine(label: string, opts: ProgressOptions = {}): ProgressLine {
  const stream = opts.stream ?? process.stderr;
  if (!stream.isTTY) return { update: NO_PROGRESS, end: () => {} };
  const now = opts.now ?? Date.now;
  const started = now();
  const delay = opts.delayMs ?? 500;
  const every = opts.everyMs ?? 100;
  let drawnAt = -Infinity;
  let stopped = false;
  const write = (text: string) => {
    try {
      stream.write(text);
    } catch {
      stopped = true; // a closed terminal
    }
  };
  return {
    update(done, total) {
      const t = now();
      if (stopped || t - started < delay || t - drawnAt < every) return;
      drawnAt = t;
      const text = progressText(label, done, total, t - started, opts.bytes);
      const width = stream.columns ? stream.columns - 1 : Infinity;
      write(CLEAR_LINE + (text.length > width ? text.slice(0, width) : text));
      progressShown.now = !stopped;
    },
    end() {
      if (drawnAt > -Infinity && !stopped) write(CLEAR_LINE);
      stopped = true;
      progressShown.now = false;
    },
  };
}
