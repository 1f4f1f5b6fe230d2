// For tags (SPEC §5, §4.1).

const BY_EXTENSION: Record<string, string[]> = {
  ts: ['typescript'],
  mts: ['typescript'],
  cts: ['typescript'],
  tsx: ['typescript', 'react'],
  js: ['javascript'],
  mjs: ['javascript'],
  cjs: ['javascript'],
  jsx: ['javascript', 'react'],
  go: ['go'],
  rs: ['rust'],
  py: ['python'],
  rb: ['ruby'],
  java: ['java'],
  kt: ['kotlin'],
  kts: ['kotlin'],
  swift: ['swift'],
  scala: ['scala'],
  c: ['c'],
  h: ['c'],
  cc: ['cpp'],
  cpp: ['cpp'],
  hpp: ['cpp'],
  cs: ['csharp'],
  php: ['php'],
  ex: ['elixir'],
  exs: ['elixir'],
  erl: ['erlang'],
  dart: ['dart'],
  lua: ['lua'],
  zig: ['zig'],
  sh: ['shell'],
  bash: ['shell'],
  sql: ['sql'],
  vue: ['vue'],
  svelte: ['svelte'],
  css: ['css'],
  scss: ['css'],
  html: ['html'],
  tf: ['terraform'],
  proto: ['protobuf'],
};

export function languagesOf(path: string): string[] {
  const m = /\.([A-Za-z0-9]+)$/.exec(path);
  return m ? (BY_EXTENSION[m[1].toLowerCase()] ?? []) : [];
}
