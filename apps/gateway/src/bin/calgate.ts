#!/usr/bin/env node
import { main } from '../cli.ts';

const code = await main(process.argv.slice(2), process.env, {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
});
if (code !== 0) {
  process.exitCode = code;
}
