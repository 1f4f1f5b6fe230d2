import { CLEAR_LINE, progressShown } from './progress.js';
import { sanitizeUntrusted } from './sanitize.js';

// Diagnostics go to stderr, one line each, prefixed `cairn <name>:`; stdout carries only the product. A
// line may quote what the command read (a pattern, a title, a path): it is sanitised and its secrets
// redacted like any text cairn shows (SPEC §4.6). A run that fails says so in one line (SPEC §2): the
// runner's logger holds its lines until the run's outcome is known, then prints them all (it
// succeeded) or only the line that ends it, with the warnings that came before folded into it (it
// failed, or kept its run for later).
export interface Logger {
  warn(message: string): void;
  info(message: string): void;
  /** Warnings printed (or held) so far (strict mode and tests read them). */
  readonly warnings: string[];
  /** Print the lines held back, in order (the run succeeded). */
  flush(): void;
  /** The run's one last line, with the warnings held back folded into it; what else was held is dropped. */
  end(message: string): void;
}

/** How many earlier warnings a failed run's line repeats; the rest are counted. */
const FOLDED = 3;

export function createLogger(name: string, quiet = false, hold = false): Logger {
  const warnings: string[] = [];
  let held: string[] = [];
  // A line first clears the progress line it would start on (lib/cli/progress.ts), if one is drawn.
  const line = (message: string) => {
    const clear = progressShown.now ? CLEAR_LINE : '';
    return `${clear}cairn ${name}: ${sanitizeUntrusted(message, { singleLine: true })}\n`;
  };
  const write = (text: string) => {
    if (hold) held.push(text);
    else process.stderr.write(text);
  };
  return {
    warnings,
    warn(message) {
      warnings.push(message);
      write(line(message));
    },
    info(message) {
      if (!quiet) write(line(message));
    },
    flush() {
      if (held.length) process.stderr.write(held.join(''));
      held = [];
    },
    end(message) {
      const earlier = hold ? warnings : [];
      const more = earlier.length > FOLDED ? `, and ${earlier.length - FOLDED} more` : '';
      const folded = earlier.length ? ` (after: ${earlier.slice(0, FOLDED).join('; ')}${more})` : '';
      held = [];
      process.stderr.write(line(message + folded));
    },
  };
}
