import { CLEAR_LINE, progressShown } from './progress.js';
import { sanitizeUntrusted } from './sanitize.js';

// One sanitised line each (SPEC §2, §4.6); a held logger prints on success, else the last line, warnings folded in.
export interface Logger {
  warn(message: string): void;
  info(message: string): void;
  readonly warnings: string[];
  flush(): void;
  end(message: string): void;
}

/** The rest are counted. */
const FOLDED = 3;

export function createLogger(name: string, quiet = false, hold = false): Logger {
  const warnings: string[] = [];
  let held: string[] = [];
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
