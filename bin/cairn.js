#!/usr/bin/env node
import { main } from '../dist/lib/cli.js';

await main(undefined, process.argv.slice(2));
