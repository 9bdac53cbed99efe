/**
 * A text that is nothing but a payload: what the rules matched covers most of it, or the text opens
 * with a chat-template turn and goes on with an instruction. Such a text is refused whatever the
 * classifier says (judge.ts); a text that quotes a payload comes with context.
 */
import type { Finding } from './detect.ts';
import { normalise } from './model/features.ts';
import { CONCEPT_NAMES, conceptCounts } from './model/lexicon.ts';

/** Texts up to this long are checked for being a bare payload. */
export const BARE_MAX = 400;
/** Share of a text the rules' match must cover for the text to be a bare payload. */
export const BARE_SHARE = 0.7;

const flat = (text: string): string => text.replace(/\s+/g, ' ').trim();

const ROLE = '(?:system|user|assistant|developer|tool|model|ipython|function)';
/** The end of an earlier turn, which a fake turn may start with. */
const TURN_END = String.raw`(?:<\|\s*(?:im_end|eot_id|end|endoftext|end_of_text)\s*\|>|</s>|<end_of_turn>|\[/inst\]|<</sys>>)`;
/**
 * A turn naming its role (ChatML, Llama 3, Gemma, Zephyr and Phi), or a Llama 2 instruction block
 * that is closed further on (`[INST] … [/INST]`, `<<SYS>> … <</SYS>>`).
 */
const TURN_OPEN = String.raw`(?:<\|\s*im_start\s*\|>\s*${ROLE}\b|<\|\s*${ROLE}\s*\|>|(?:<\|\s*begin_of_text\s*\|>\s*)?<\|\s*start_header_id\s*\|>\s*${ROLE}\s*<\|\s*end_header_id\s*\|>|<start_of_turn>\s*${ROLE}\b|(?:<s>\s*)?(?:\[inst\]|<<sys>>)([^]*?)(?:\[/inst\]|<</sys>>))`;
/** A text whose first words are a chat-template turn (after opening quotes or brackets at most). */
const OPENS_WITH_TURN = new RegExp(String.raw`^[\s"'\`‘’“”„«»‹›「『(]*(?:${TURN_END}\s*)*${TURN_OPEN}`);
/** Concepts of the lexicon that make what follows a turn marker an instruction to its reader. */
const INSTRUCTION = [
  'ai',
  'instructions',
  'override',
  'send',
  'mass',
  'role',
  'secrecy',
  'reader',
  'please',
  'behalf',
  'you',
  'play',
].map((name) => CONCEPT_NAMES.indexOf(name));

/**
 * Whether the text opens with a chat-template turn (`<|im_start|>system`, `[INST]`,
 * `<start_of_turn>user` …) followed by an instruction in any language of the lexicon: text written
 * as a turn of the reader's own conversation. A text that discusses chat templates names them after
 * some words of its own (a review, a training, a bug report).
 */
export function opensWithTurn(text: string): boolean {
  const norm = normalise(text);
  const m = OPENS_WITH_TURN.exec(norm);
  if (m === null) {
    return false;
  }
  // What the turn says: the rest of the text, or what a Llama 2 block holds.
  const counts = conceptCounts(m[1] ?? norm.slice(m[0].length));
  return INSTRUCTION.some((i) => (counts[i] ?? 0) > 0);
}

/** Whether the text is the payload, not a quote of it: the rules' match is most of it, or it is a fake turn. */
export function isBare(text: string, found: Finding): boolean {
  return flat(found.match).length >= BARE_SHARE * flat(text).length || opensWithTurn(text);
}
