'use strict';
// Loads a command's bundle (dist/bin/<name>.cjs, built by tools/bundle.js, which copies this file beside
// them) with a V8 code cache. Every hook is a fresh process, and parsing and compiling the functions
// it runs is a large part of its start-up: the bytecode of what a run compiled is kept after that run
// (dist/bin/cache/<name>.bin), and later runs skip the work. V8 checks a cache against the source, its
// own version and its flags and refuses a stale one; a refused or missing cache is written again after
// the run. Where the package cannot be written (a read-only install), the bundle is compiled as usual.
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const Module = require('node:module');
const vm = require('node:vm');

/** The exports of the bundle `name`, run as CommonJS as require() would run it. */
module.exports = function load(name) {
  const file = join(__dirname, `${name}.cjs`);
  const cacheFile = join(__dirname, 'cache', `${name}.bin`);
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined; // none yet
  }
  const script = new vm.Script(Module.wrap(readFileSync(file, 'utf8')), { filename: file, cachedData });
  const bundle = new Module(file, module);
  bundle.filename = file;
  script.runInThisContext().call(bundle.exports, bundle.exports, Module.createRequire(file), bundle, file, __dirname);
  if (cachedData === undefined || script.cachedDataRejected) process.once('exit', () => keep(script, cacheFile));
  return bundle.exports;
};

/** Write the cache after the run, when it holds every function the run compiled; best effort. */
function keep(script, cacheFile) {
  try {
    try {
      mkdirSync(join(cacheFile, '..')); // not its parents: a package removed meanwhile is not made again
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    const temp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(temp, script.createCachedData());
    renameSync(temp, cacheFile);
  } catch {
    // not writable: the next run compiles again
  }
}
