#!/usr/bin/env node
require('../dist/bin/load.cjs')('format-patterns').run(process.argv.slice(2));
