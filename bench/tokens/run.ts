// TOON vs compact JSON for list_events of 50 realistic events (attendees, descriptions,
// recurring instances), and the size of the whole catalogue's tools/list, in o200k_base tokens.
// Target: TOON ≥ 35 % fewer; tools/list ≤ 9,100 for a new key, ≤ 350 per tool for the whole
// catalogue (the budgets packages/tools/test/tokens.test.ts holds). Appends to bench/results/tokens.md.
import { appendFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { catalogue, formatText } from '@calgate/tools';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { realisticEvents } from '../../packages/tools/test/read-fixtures.ts';
import { machineSummary, today } from '../lib/machine.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const events = realisticEvents(50);
const json = encode(formatText({ events }, 'json')).length;
const toon = encode(formatText({ events }, 'toon')).length;
const entries = catalogue().entries;
const listed = (selected: typeof entries) =>
  selected.map(({ definition, inputSchema, outputSchema }) => ({
    name: definition.name,
    title: definition.title,
    description: definition.description,
    inputSchema,
    outputSchema,
    // As tools/list sends it: the title once, not again inside the annotations.
    annotations: { ...definition.annotations },
  }));
// A new key's toolsets (calendar, booking, search): every toolset but rules.
const byDefault = listed(entries.filter(({ definition }) => definition.toolset !== 'rules'));
const all = listed(entries);
const defaultList = encode(JSON.stringify({ tools: byDefault })).length;
const allList = encode(JSON.stringify({ tools: all })).length;
const rows = [
  `| list_events, 50 realistic events | ${json} | ${toon} | ${(100 * (1 - toon / json)).toFixed(1)} % fewer |`,
  `| tools/list, default toolsets (${byDefault.length} tools) | ${defaultList} | | budget 9,100 |`,
  `| tools/list, whole catalogue (${all.length} tools) | ${allList} (${Math.round(allList / all.length)} per tool) | | budget 350 per tool |`,
];
const header = '| what | JSON tokens | TOON tokens | result |';
console.log(`tokens (o200k_base): ${machineSummary()}`);
console.log(header);
console.log('|---|---|---|---|');
console.log(rows.join('\n'));
if (process.env.BENCH_RECORD !== '0') {
  await mkdir(`${root}bench/results`, { recursive: true });
  await appendFile(
    `${root}bench/results/tokens.md`,
    `\n## ${today()}\n\nTokens counted with gpt-tokenizer (o200k_base). TOON writes lists of events as one table; fields equal for every event are written once (\`eventsCommon\`).\n\n${header}\n|---|---|---|---|\n${rows.join('\n')}\n`,
  );
}
