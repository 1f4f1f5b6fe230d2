import { describe, it, expect } from 'vitest';
import { redactSecrets } from '../lib/core/secrets.js';
import { secretShapes, telltales } from './helpers.js';

// Secret redaction (SPEC §4.6): each kind of credential goes, the words around it stay.

// Built from pieces so this file itself holds no token-shaped string a scanner would flag.
const GHP = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
const PAT = 'github_pat_' + '11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz';
const SK = 'sk-' + 'proj-' + 'Ab12Cd34Ef56Gh78Ij90Kl12Mn34';
const SLACK = 'xox' + 'b-1234567890-0987654321-AbCdEfGhIjKlMnOp';
const AWS = 'AKIA' + 'IOSFODNN7EXAMPLE';
const GOOGLE = 'AIza' + 'SyA1234567890abcdefghijklmnopqrstuv';
const JWT = 'eyJ' + 'hbGciOiJIUzI1NiJ9.eyJ' + 'zdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
const PEM = ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEAx1x2x3', 'abcdefghij==', '-----END RSA PRIVATE KEY-----'].join('\n');

describe('redactSecrets', () => {
  it.each([
    ['github-token', `push with ${GHP} from CI`, 'push with [REDACTED:github-token] from CI'],
    ['github-token', `token ${PAT}.`, 'token [REDACTED:github-token].'],
    ['api-key', `OPENAI key ${SK} works`, 'OPENAI key [REDACTED:api-key] works'],
    ['slack-token', `slack bot uses ${SLACK}`, 'slack bot uses [REDACTED:slack-token]'],
    ['aws-access-key', `aws id ${AWS} in us-east-1`, 'aws id [REDACTED:aws-access-key] in us-east-1'],
    ['google-api-key', `maps key ${GOOGLE}`, 'maps key [REDACTED:google-api-key]'],
    ['jwt', `header was ${JWT}`, 'header was [REDACTED:jwt]'],
    ['bearer-token', 'curl -H "Authorization: Bearer abcdef0123456789abcdef"', 'curl -H "Authorization: Bearer [REDACTED:bearer-token]"'],
    ['private-key', `key:\n${PEM}\nafter`, 'key:\n[REDACTED:private-key]\nafter'],
    ['private-key', 'pasted -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA', 'pasted [REDACTED:private-key]'],
    [
      'connection-string',
      'DATABASE_URL is postgres://app:s3cr3tpw@db.internal:5432/app',
      'DATABASE_URL is postgres://app:[REDACTED:connection-string]@db.internal:5432/app',
    ],
    [
      'connection-string',
      'mongodb+srv://admin:hunter22@cluster0.x.mongodb.net',
      'mongodb+srv://admin:[REDACTED:connection-string]@cluster0.x.mongodb.net',
    ],
    ['assignment', 'set password=hunter2 in the test env', 'set password=[REDACTED:secret] in the test env'],
    ['assignment', 'DB_PASSWORD: "c0rrect-horse"', 'DB_PASSWORD: "[REDACTED:secret]"'],
    ['assignment', `{"api_key": "abcd1234efgh"}`, `{"api_key": "[REDACTED:secret]"}`],
    ['assignment', "client_secret = 'Zx9-long-value'", "client_secret = '[REDACTED:secret]'"],
  ])('%s: %j', (kind, input, expected) => {
    const r = redactSecrets(input);
    expect(r.text).toBe(expected);
    expect(r.kinds).toContain(kind);
  });

  it.each([
    'the file system: ext4',
    'task-runner retries failed jobs',
    'the password must be hashed with argon2 before it is stored',
    'password: required',
    'secret: rotate it yearly',
    'set password=$DB_PASSWORD from the environment',
    'token=${GITHUB_TOKEN} comes from the workflow',
    'password=<your password>',
    'git@github.com:org/repo.git and https://example.com:8080/path',
    'use scikit-learn (sk-learn) for the model',
    'Bearer tokens expire after an hour',
    'CPF inválido — the → arrow stays',
  ])('keeps %j', (benign) => {
    expect(redactSecrets(benign)).toEqual({ text: benign, kinds: [] });
  });
});

describe('the corpus of secret shapes', () => {
  const shapes = secretShapes();

  it('holds some thirty shapes', () => {
    expect(shapes.length).toBeGreaterThanOrEqual(30);
  });

  it.each(shapes.map((s) => [s.name, s] as const))('%s is redacted, the words around it kept', (_name, shape) => {
    const { text, kinds } = redactSecrets(shape.text);
    for (const part of telltales(shape.secret)) expect(text).not.toContain(part);
    expect(kinds.length).toBeGreaterThan(0);
    expect(text).toContain('[REDACTED:');
    const firstWords = shape.text.split(' ').slice(0, 2).join(' ');
    expect(text.startsWith(firstWords)).toBe(true);
  });

  it.each([
    // the shapes knowledge capture missed
    ['an upper-case key with a value starting with %', 'export PASSWORD=%Wia8#kP2vQ!x', 'export PASSWORD=[REDACTED:secret]'],
    [
      'a key: value whose key holds a space',
      'smtp password: RYayXcQvLmWp is in the vault',
      'smtp password: [REDACTED:secret] is in the vault',
    ],
    [
      'a connection string with a password alone',
      'REDIS_URL=redis://:y4QiT7vR2mZx@cache:6379/0',
      'REDIS_URL=redis://:[REDACTED:connection-string]@cache:6379/0',
    ],
    ['an Anthropic key, dashes inside', `ANTHROPIC key sk-ant-api03-${'Ab3_x-'.repeat(15)}QQ ok`, 'ANTHROPIC key [REDACTED:api-key] ok'],
  ])('%s', (_what, input, expected) => {
    expect(redactSecrets(input).text).toBe(expected);
  });

  it.each([
    'printf-style placeholders: password=%s and token=%(token)s and PASSWORD=%DB_PASSWORD%',
    'basic internationalization support is enough',
    'the sk-some-long-feature-branch-name branch',
  ])('keeps %j', (benign) => {
    expect(redactSecrets(benign)).toEqual({ text: benign, kinds: [] });
  });
});
