/** The language's reference in Markdown, served as `calgate://docs/rules-syntax`. */
import { MAX_DEPTH, MAX_QUERY_LENGTH } from './parser.ts';
import { PROPERTIES } from './properties.ts';

/** A dozen queries that show the language; each one parses. */
export const SYNTAX_EXAMPLES: readonly { query: string; meaning: string }[] = [
  { query: 'domain:acme.com', meaning: 'an attendee has an @acme.com address (not @eu.acme.com)' },
  { query: 'title:standup', meaning: 'the title has the word "standup" ("Daily Standup", not "Standups")' },
  { query: 'title:stand*', meaning: 'a title word starts with "stand" ("Standup", "stand up")' },
  {
    query: 'title:"team meeting"',
    meaning: 'the words "team meeting" in a row; title:team-meeting is the same',
  },
  { query: 'response:declined', meaning: 'the calendar owner declined' },
  { query: 'day-of-week:sat,sun', meaning: "starts on a weekend day, in the event's time zone" },
  { query: 'time-of-day:>17:00', meaning: 'starts after 17:00 local time (all-day events never match)' },
  { query: 'domain:client.com title:weekly', meaning: 'both conditions (AND is implicit)' },
  { query: 'title:sync AND domain:example.com', meaning: 'the same as title:sync domain:example.com' },
  { query: 'title:standup OR title:sync', meaning: 'either condition' },
  { query: '(domain:a.com OR domain:b.com) title:sync', meaning: 'grouping: a sync with a.com or b.com' },
  { query: '-title:canceled', meaning: 'negation: the title does not have the word "canceled"' },
  {
    query: 'attendees:sarah -(response:declined OR is-all-day:yes)',
    meaning: 'a meeting with Sarah, neither declined nor all-day',
  },
  { query: 'recurring:yes has-attendees:no', meaning: 'a recurring event with nobody else invited' },
  {
    query: 'budget review',
    meaning: 'bare words search title, description and attendees (text:budget text:review)',
  },
];

const propertyRows = PROPERTIES.map((info) => {
  const values = info.values ? ` Values: ${info.values.map((v) => `\`${v}\``).join(', ')}.` : '';
  return `| \`${info.name}\` | ${info.description}.${values} | \`${info.name}:${info.example}\` |`;
}).join('\n');

export const syntaxDoc = `# Classification rule syntax

A rule is a Gmail-style query. An event occurrence that matches the query is classified to the
rule's project. Test a query with \`preview_rule\` before saving it.

## Grammar

\`\`\`
query     := or
or        := and ( OR and )*      OR (any case) binds looser than AND: "a b OR c" = (a AND b) OR c
and       := unary ( AND? unary )*  adjacent conditions are ANDed; writing AND (any case) is optional
unary     := '-' unary | primary  '-' (no space after it) negates a condition or a group; NOT is refused
primary   := '(' or ')' | term
term      := NAME ':' value       NAME is case-insensitive; the first ':' separates
           | value                a bare value means text:value
value     := '"' chars '"'        quoted: may hold spaces, ':' and parentheses; \\" and \\\\ escape
           | word                 runs to whitespace or a parenthesis; may contain ':' and '-'
\`\`\`

So \`time-of-day:>17:00\` and \`title:team-meeting\` need no quotes; \`title:"weekly sync"\` does.
The bare words \`AND\`, \`OR\` and \`NOT\` (any case: \`and\`, \`Or\` …) are never search words:
\`AND\` and \`OR\` are operators, and \`NOT\` is refused with "use '-' to negate" (write
\`-title:lunch\`, not \`NOT title:lunch\`). To search for one of these words, quote it: \`"and"\`.
A query is at most ${MAX_QUERY_LENGTH} characters; parentheses nest at most ${MAX_DEPTH} deep.

## Matching

Matching ignores case and accents ("Réunion" matches \`title:reunion\`). Words are runs of
letters and digits, so punctuation and '-' separate words. For \`title\`, \`description\`,
\`calendar\` and \`text\`, the value's words must appear as consecutive words of the field:
\`title:ac\` matches "AC sync" but not "Jack". A value ending in \`*\` makes its last word a prefix.

## Properties

| property | matches when | example |
|---|---|---|
${propertyRows}

Times and weekdays are read in the event's time zone (its start.timeZone, else its calendar's).
Recurring events are evaluated occurrence by occurrence.

## Examples

| query | matches |
|---|---|
${SYNTAX_EXAMPLES.map((e) => `| \`${e.query}\` | ${e.meaning} |`).join('\n')}

## Errors

A query that cannot be read is refused with a message that gives the position (0-based) and what
was expected there, for example:

- \`subject:standup\` → Unknown property 'subject' at position 0. Did you mean 'title'? (the message lists the valid properties)
- \`day-of-week:funday\` → Invalid value 'funday' for 'day-of-week' at position 12 … Did you mean 'sunday'?
- \`time-of-day:25:00\`, \`recurring:maybe\` → invalid value at the value's position
- \`title:"team meeting\` → Unclosed quote at position 6
- \`(domain:a.com OR domain:b.com\` → Missing ')' at the end of the query
- \`title:a)\` → Unexpected ')' at position 7
- \`OR title:a\`, \`title:a OR\` → OR needs a condition on both sides (the same for AND)
- \`title:sync NOT title:planning\` → 'NOT' at position 11 is not an operator: use '-' to negate
- \`title:a -\` → '-' has nothing to negate
- \`title:\` → Missing value for 'title'
- an empty query or \`()\` → empty query or group

Rules never fail silently: an unknown property or an impossible value is an error, not a rule that
matches nothing. A query that reads but matches no event is not an error: \`preview_rule\`,
\`create_rule\` and \`update_rule\` answer it with a \`warnings\` entry (kind \`no_matches\`) naming
the window they looked at.
`;
