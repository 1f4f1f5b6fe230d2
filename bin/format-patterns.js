#!/usr/bin/env node
require('../dist/bin/format-patterns.cjs').run(process.argv.slice(2));
