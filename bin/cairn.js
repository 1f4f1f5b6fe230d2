#!/usr/bin/env node
require('../dist/bin/cairn.cjs').run(process.argv.slice(2));
