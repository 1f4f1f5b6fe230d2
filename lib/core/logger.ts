import { sanitizeUntrusted } from './sanitize.js';

// Diagnostics go to stderr, one line each, prefixed `cairn <name>:`; stdout carries only the product. A
// line may quote what the command read (a pattern, a title, a path): it is sanitised and its secrets
// redacted like any text cairn shows (SPEC §4.6).

export interface Logger {
  warn(message: string): void;
  info(message: string): void;
  /** Warnings printed so far (strict mode and tests read them). */
  readonly warnings: string[];
}

export function createLogger(name: string, quiet = false): Logger {
  const warnings: string[] = [];
  const line = (message: string) => `cairn ${name}: ${sanitizeUntrusted(message, { singleLine: true })}\n`;
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
