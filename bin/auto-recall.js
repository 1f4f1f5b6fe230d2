#!/usr/bin/env node
import { run } from '../dist/bin/auto-recall.js';

await run(process.argv.slice(2));
