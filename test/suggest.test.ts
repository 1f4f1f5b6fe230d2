import { describe, it, expect } from 'vitest';
import { editDistance, extensionsOf, nearest } from '../lib/core/suggest.js';

// "Did you mean …?": near enough to be a typo, or the start of exactly one longer name.

describe('nearest', () => {
  it('counts an adjacent swap as one edit and scales the allowance with the word', () => {
    expect(editDistance('lsit', 'list')).toBe(1);
    expect(nearest('lsit', ['list', 'init', 'events'])).toBe('list');
    expect(nearest('fle', ['file', 'files'])).toBe('file');
    expect(nearest('audtor', ['curator', 'auditor'])).toBe('auditor');
  });

  it('suggests nothing for a word that is neither near nor the start of one name', () => {
    expect(nearest('zzz', ['list', 'init'])).toBeUndefined();
    expect(nearest('adversarial', ['adversarial-role', 'adversarial-file'])).toBeUndefined(); // two names start so
    expect(nearest('ad', ['adversarial-role'])).toBeUndefined(); // too short to stand for it
  });

  it('takes a shortened name for the one longer name it begins', () => {
    expect(nearest('validator', ['validator-role', 'validator-file', 'issue'])).toBeUndefined();
    expect(nearest('remaining', ['remaining-tokens', 'role'])).toBe('remaining-tokens');
    expect(extensionsOf('adversarial', ['adversarial-role', 'adversarial-file', 'issue'])).toEqual([
      'adversarial-role',
      'adversarial-file',
    ]);
  });
});
