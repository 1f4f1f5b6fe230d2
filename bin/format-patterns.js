#!/usr/bin/env node
import { run } from '../dist/bin/format-patterns.js';

await run(process.argv.slice(2));
