// npm's preinstall hook: it runs under whatever Node.js the user has, so it is CommonJS in the
// syntax of Node.js 8 (no optional chaining, no `??`, no imports) and still parses there.
// Usage: node scripts/check-node.cjs [a version to check instead of this Node's, for tests]
'use strict';

const MINIMUM = [22, 18, 0];

function parts(version) {
  const numbers = String(version).replace(/^v/, '').split('.');
  const result = [];
  for (let i = 0; i < 3; i++) {
    const value = parseInt(numbers[i] || '0', 10);
    result.push(Number.isNaN(value) ? 0 : value);
  }
  return result;
}

function olderThanMinimum(version) {
  const have = parts(version);
  for (let i = 0; i < 3; i++) {
    if (have[i] !== MINIMUM[i]) {
      return have[i] < MINIMUM[i];
    }
  }
  return false;
}

const version = process.argv[2] || process.versions.node;
if (olderThanMinimum(version)) {
  process.stderr.write(
    `Calgate needs Node.js 22.18 or newer; this is v${String(version).replace(/^v/, '')}\n`,
  );
  process.exit(1);
}
