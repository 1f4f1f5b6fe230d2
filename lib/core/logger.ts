import { CLEAR_LINE } from './progress.js';

// Diagnostics go to stderr, one line each, prefixed `cairn <name>:`; stdout carries only the product.

export interface Logger {
  warn(message: string): void;
  info(message: string): void;
  /** Warnings printed so far (strict mode and tests read them). */
  readonly warnings: string[];
}

export function createLogger(name: string, quiet = false): Logger {
  const warnings: string[] = [];
  // On a terminal a line first clears the one it starts on, which may hold a progress line (lib/cli/progress.ts).
  const line = (message: string) => {
    const clear = process.stderr.isTTY ? CLEAR_LINE : '';
    return `${clear}cairn ${name}: ${message.replace(/\s*\n\s*/g, ' ')}\n`;
  };
  return {
    warnings,
    warn(message) {
      warnings.push(message);
      process.stderr.write(line(message));
    },
    info(message) {
      if (!quiet) process.stderr.write(line(message));
    },
  };
}
