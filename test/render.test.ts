import { describe, it, expect } from 'vitest';
import {
  BLOCK_FOOTER,
  blockHeader,
  fitBlock,
  linePieces,
  renderBlock,
  trackRecord,
  withoutRestatements,
  type FitInput,
} from '../lib/patterns/block.js';
import type { Pattern } from '../lib/patterns/queries.js';
import type { ScoreFactors } from '../lib/patterns/scoring.js';

// The block's lines and the fitting paths (SPEC §3.5 steps 3–4), with counts supplied by the test.

/** A ranked pattern whose rate × decay is 0.4242 (what the block shows), however large its ranking score. */
function ranked(over: Partial<Pattern> = {}) {
  const factors = {
    rate: 0.6,
    decay: 0.707,
    category: 1.3,
    context: 1.35,
    role: 1,
    days: 4.9,
    base: 0.744,
  } as ScoreFactors;
  return {
    pattern: {
      id: 'p3f2a1c0d9e8b7a',
      role: 'auditor',
      text: 'Never log raw tokens',
      success_count: 1,
      ignore_count: 0,
      reinforcement_count: 0,
      ...over,
    } as Pattern,
    factors,
  };
}

describe('track record', () => {
  it('is the shown score, rate × decay in 0..1, when never ignored nor reinforced (SPEC §3.9.3)', () => {
    expect(trackRecord(ranked())).toBe('score:0.42');
  });

  it('counts validations once reinforced', () => {
    expect(trackRecord(ranked({ success_count: 6, reinforcement_count: 5 }))).toBe('5x validated');
  });

  it('shows net successes and ignores once ever ignored, even if also reinforced', () => {
    expect(trackRecord(ranked({ success_count: 1, ignore_count: 3 }))).toBe('-2 net, 3x ignored');
    expect(trackRecord(ranked({ success_count: 4, ignore_count: 1, reinforcement_count: 2 }))).toBe('3 net, 1x ignored');
  });
});

describe('lines and block', () => {
  it('marks a pattern of another role with via:<role>', () => {
    expect(linePieces(ranked(), 'auditor')).toEqual(['- Never log raw tokens', ' (score:0.42)']);
    expect(linePieces(ranked({ role: 'judge' }), 'auditor')).toEqual(['- Never log raw tokens', ' (score:0.42, via:judge)']);
  });

  it('starts with the short id a finding can cite, with --ids', () => {
    expect(linePieces(ranked(), 'auditor', true)).toEqual(['- [p3f2a1c] Never log raw tokens', ' (score:0.42)']);
  });

  it('leaves out a line that restates a better-ranked one (a finding beside its rule), and keeps distinct checks', () => {
    const lines = [
      'Plans must name the test file that proves each acceptance criterion before implementation starts',
      'Every new CLI flag must be documented in the man page before merge',
      'Plan does not name the test file that proves each acceptance criterion',
      'Session cookies must be HttpOnly, Secure and SameSite',
      'Access tokens must be redacted from request logs before anything is written',
      'Never log raw tokens',
      'Never log raw request bodies: tokens and passwords travel in them',
    ].map((text) => ranked({ text }));
    expect(
      withoutRestatements((j) => lines[j])
        .all()
        .map((r) => r.pattern.text),
    ).toEqual([lines[0], lines[1], lines[3], lines[4], lines[5], lines[6]].map((r) => r.pattern.text));
  });

  it('frames the lines with header and footer', () => {
    expect(renderBlock('judge', ['- a (score:1.00)', '- b (score:0.90)'])).toBe(
      '=== HISTORICAL PATTERNS (judge) ===\n- a (score:1.00)\n- b (score:0.90)\n=== END HISTORICAL PATTERNS ===',
    );
    expect(blockHeader('lens')).toBe('=== HISTORICAL PATTERNS (lens) ===');
    expect(BLOCK_FOOTER).toBe('=== END HISTORICAL PATTERNS ===');
  });
});

describe('fitBlock', () => {
  const LINES = ['- first line', '- second line', '- third line'];

  /** Every line costs 10 tokens, the frame 5; bytes are 4× tokens. Records which counts were asked for. */
  function input(budget: number, over: Partial<FitInput> = {}) {
    const asked: string[] = [];
    const fit: FitInput = {
      role: 'auditor',
      budget,
      line: (i) => LINES[i],
      complete: true,
      lineTokens: (i) => (asked.push(`line ${i}`), 10),
      lineBytes: () => 40,
      get frameTokens() {
        asked.push('frame');
        return 5;
      },
      frameBytes: 20,
      scale: (t) => t,
      exactTokens: false,
      ...over,
    };
    return { fit, asked };
  }

  it('(a) full, without counting anything when the byte length fits', () => {
    const { fit, asked } = input(140); // 20 + 3 × 40 bytes
    expect(fitBlock(fit)).toEqual({ path: 'full', count: 3, tokens: 140, block: renderBlock('auditor', LINES) });
    expect(asked).toEqual([]);
  });

  it('(a) full by counting when the bytes do not fit, or exactly when asked', () => {
    expect(fitBlock(input(35).fit)).toMatchObject({ path: 'full', count: 3, tokens: 35 });
    const { fit, asked } = input(1000, { exactTokens: true });
    expect(fitBlock(fit).tokens).toBe(35);
    expect(asked).toEqual(['frame', 'line 0', 'line 1', 'line 2']);
  });

  it('(b) the summary when the lines do not all fit and the summary does', () => {
    const { fit } = input(30, { summary: { text: ' a short summary \n', tokens: () => 8, matches: () => true } });
    expect(fitBlock(fit)).toEqual({
      path: 'summary',
      count: 0,
      tokens: 13,
      block: renderBlock('auditor', ['a short summary']),
    });
  });

  it('(c) the best-first prefix when the summary is missing or too long', () => {
    const { fit, asked } = input(30, { summary: { text: 'long', tokens: () => 100, matches: () => true } });
    expect(fitBlock(fit)).toEqual({
      path: 'truncated',
      count: 2,
      tokens: 25,
      block: renderBlock('auditor', LINES.slice(0, 2)),
    });
    expect(asked).toEqual(['frame', 'line 0', 'line 1', 'line 2', 'frame']); // stops at the first line that overflows
  });

  it('ignores a summary written for other candidates', () => {
    const { fit } = input(30, { summary: { text: 'short', tokens: () => 2, matches: () => false } });
    expect(fitBlock(fit).path).toBe('truncated');
  });

  it('is never full when more candidates exist beyond the lines it was given', () => {
    expect(fitBlock(input(1000, { complete: false }).fit)).toMatchObject({ path: 'truncated', count: 3 });
  });

  it('reads lines best first and no further than the first that overflows when more candidates exist', () => {
    const read: number[] = [];
    const many = Array.from({ length: 1000 }, (_, i) => `- line ${i}`);
    const { fit } = input(35, { complete: false, line: (i) => (read.push(i), many[i]) });
    expect(fitBlock(fit)).toMatchObject({ path: 'truncated', count: 3 });
    expect(Math.max(...read)).toBe(3);
  });

  it('applies the safety margin before comparing with the budget', () => {
    expect(fitBlock(input(35, { scale: (t) => Math.ceil(t * 1.15) }).fit)).toMatchObject({
      path: 'truncated',
      count: 2,
      tokens: 29,
    });
  });

  it('is skipped when not even one line fits, or there are no lines', () => {
    expect(fitBlock(input(14).fit)).toEqual({ path: 'skipped', count: 0, tokens: 0, block: '' });
    expect(fitBlock(input(1000, { line: () => undefined }).fit).path).toBe('skipped');
  });
});
