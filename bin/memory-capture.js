#!/usr/bin/env node
require('../dist/bin/memory-capture.cjs').run(process.argv.slice(2));
