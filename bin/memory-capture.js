#!/usr/bin/env node
import { run } from '../dist/bin/memory-capture.js';

await run(process.argv.slice(2));
