/**
 * How rules are written: in plain lower-case text, matched against one of the forms of
 * normalize.ts. Word patterns are folded like the text, so `précédentes` or `инструкции` in a
 * pattern matches however the text spells it.
 */
import { foldPattern } from './normalize.ts';

export type FormName = 'folded' | 'words' | 'squashed';

export interface Pattern {
  form: FormName;
  re: RegExp;
}

/** A phrase over whole words: ` (?:…) ` against the words form (and its leet reading). */
export function inWords(source: string): Pattern {
  return { form: 'words', re: new RegExp(` (?:${foldPattern(source)}) `) };
}

/**
 * A phrase with its spaces dropped, against the squashed form: survives splitting inside words.
 * Global, so the search can move past matches that do not start and end at word edges.
 */
export function inSquashed(source: string): Pattern {
  return { form: 'squashed', re: new RegExp(foldPattern(source).replace(/ /g, ''), 'g') };
}

/** Both of the above; a phrase with a wildcard word is matched whole words only. */
export function phrase(source: string): Pattern[] {
  return /\[a-z0?-?9?\]\+/.test(source) ? [inWords(source)] : [inWords(source), inSquashed(source)];
}

/** A pattern over the folded text: lower case, no accents, punctuation and line breaks kept. */
export function inFolded(re: RegExp): Pattern {
  return { form: 'folded', re };
}

/** Alternatives as one non-capturing group. */
export function any(...alternatives: string[]): string {
  return `(?:${alternatives.join('|')})`;
}

/** Names of calendar tools an injection tells the agent to call: Calgate's and the usual kind. */
export const TOOL_NAME =
  '(?:(?:create|update|delete|patch|move|cancel|remove|clear|book|list|get|search|find|send|share|forward|export|insert|import|manage|respond_to|quick_add|batch_update|batch_delete|check|expand)[_-]?(?:events?|calendars?|bookings?|attendees|slots?|emails?|messages?|invites?|invitations?|acl|contacts?|files?|availability|free_time|free_slots|colors|rrule|current_time))';

/** Calgate's own tool names, as exactly written. */
export const CALGATE_TOOL =
  '(?:create_event|batch_update_events|manage_attendees|delete_event|create_calendar|quick_add_event|respond_to_event|update_event|list_events|get_current_time|find_free_time|search_events|get_event|list_colors|cancel_booking|list_bookings|list_calendars|find_free_slots|get_availability|expand_rrule|book_slot|check_availability)';

/** Unambiguous names for an AI reader, several languages. */
export const AI_NOUN =
  '(?:ai|a\\.i\\.|llms?|large language models?|language models?|chat ?gpt|gpt(?:-?[0-9][a-z0-9.]*)?|openai|(?:ai|virtual|digital|autonomous|intelligent|automated|calendar|scheduling|email|inbox|booking) (?:assistant|agent|model|system|bot|tool)s?|ai-(?:assistant|agent|model|bot)s?|chatbots?|mcp (?:client|agent|host)s?|ki|ia|ki-assistent(?:en)?|ki-agent(?:en)?)';

/** Words that address an AI reader but also name people and things (an assistant, Claude). */
export const AMBIGUOUS_NOUN =
  '(?:assistant|agent|model|bot|claude|gemini|copilot|bard|siri|alexa|cortana|grok|llama|mistral|deepseek|assistenten|assistent|assistente|asistente|agenten|agente|modell|modele|modelo|modello|assistentin|assistante)';
