#!/usr/bin/env node
require('../dist/bin/load.cjs')('memory-capture').run(process.argv.slice(2));
