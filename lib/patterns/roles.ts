import type { Store } from '../store/store.js';
import { patternDb } from '../events/log.js';
import { nearest } from '../core/suggest.js';
import { storedRoles } from './queries.js';
import { configuredRoles } from '../store/config.js';

// An unknown role is most often a typo: said, with the nearest known one.

export function warnUnknownRoles(store: Store, ...names: string[]): void {
  const configured = configuredRoles(store.config);
  for (const role of names) {
    const r = role.toLowerCase();
    if (configured.includes(r)) continue; // the usual roles need no database
    const stored = storedRoles(patternDb(store), store.project);
    if (stored.includes(r)) continue;
    const guess = nearest(r, [...new Set([...configured, ...stored])]);
    store.log.warn(`role '${role}' is not in config.json and nothing is stored for it yet` + (guess ? ` (did you mean ${guess}?)` : ''));
  }
}
