import { words } from '../core/text.js';
import { languagesOf } from '../core/languages.js';
import { unique } from './report.js';

// Tags (SPEC §5): languages of the changed files, their directories (generic ones dropped), categories named; at most 20.

export const MAX_TAGS = 20;

const GENERIC_DIRS = new Set([
  'src',
  'lib',
  'libs',
  'app',
  'apps',
  'packages',
  'package',
  'pkg',
  'internal',
  'cmd',
  'source',
  'sources',
  'dist',
  'build',
  'out',
  'bin',
  'vendor',
  'node_modules',
  'test',
  'tests',
  '__tests__',
  'spec',
  'specs',
  'main',
]);

const CATEGORIES: Record<string, string> = {
  api: 'api',
  apis: 'api',
  endpoint: 'api',
  endpoints: 'api',
  rest: 'api',
  graphql: 'api',
  grpc: 'api',
  web: 'web',
  website: 'web',
  frontend: 'frontend',
  ui: 'ui',
  ux: 'ui',
  backend: 'backend',
  server: 'backend',
  cli: 'cli',
  database: 'database',
  db: 'database',
  sql: 'database',
  sqlite: 'database',
  postgres: 'database',
  postgresql: 'database',
  mysql: 'database',
  schema: 'database',
  migration: 'migration',
  migrations: 'migration',
  auth: 'auth',
  authentication: 'auth',
  authorization: 'auth',
  login: 'auth',
  oauth: 'auth',
  sso: 'auth',
  security: 'security',
  test: 'testing',
  tests: 'testing',
  testing: 'testing',
  docs: 'docs',
  documentation: 'docs',
  readme: 'docs',
  config: 'config',
  configuration: 'config',
  settings: 'config',
  deploy: 'deploy',
  deployment: 'deploy',
  release: 'deploy',
  ci: 'ci',
  pipeline: 'ci',
  cache: 'cache',
  caching: 'cache',
  search: 'search',
  performance: 'performance',
  perf: 'performance',
  latency: 'performance',
  payment: 'payments',
  payments: 'payments',
  billing: 'billing',
  invoice: 'billing',
  invoices: 'billing',
  email: 'email',
  notification: 'notifications',
  notifications: 'notifications',
  logging: 'logging',
  logs: 'logging',
  monitoring: 'monitoring',
  metrics: 'monitoring',
  storage: 'storage',
  upload: 'storage',
  mobile: 'mobile',
  i18n: 'i18n',
  dashboard: 'dashboard',
};

export function landingTags(paths: string[], title: string, prompt: string | null): string[] {
  const languages = paths.flatMap(languagesOf);
  const dirs = paths
    .flatMap((p) => p.split('/').slice(0, -1))
    .map((d) => d.toLowerCase())
    .filter((d) => /^[a-z][a-z0-9_-]*$/.test(d) && !GENERIC_DIRS.has(d));
  const categories = words(`${title} ${prompt ?? ''}`)
    .map((w) => CATEGORIES[w])
    .filter((c): c is string => c !== undefined);
  return unique([...languages, ...dirs, ...categories])
    .slice(0, MAX_TAGS)
    .sort();
}
