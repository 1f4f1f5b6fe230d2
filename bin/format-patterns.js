#!/usr/bin/env node
import { main } from '../dist/lib/cli.js';

await main('format-patterns', process.argv.slice(2));
