#!/usr/bin/env node
require('../dist/bin/load.cjs')('auto-recall').run(process.argv.slice(2));
