#!/usr/bin/env node
import { run } from '../dist/bin/cairn.js';

await run(process.argv.slice(2));
