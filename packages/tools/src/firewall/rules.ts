/**
 * Payloads refused on sight: each of these is an instruction to an AI reader whatever surrounds
 * it. Attempts to get data out are in exfiltration.ts, phrases in other languages in
 * languages.ts; weaker hints that only count together are in signals.ts.
 */
import { any, CALGATE_TOOL, inFolded, inWords, type Pattern, phrase, TOOL_NAME } from './patterns.ts';

export interface Rule {
  /** What the payload is, for the message. */
  what: string;
  patterns: Pattern[];
}

const OVERRIDE = any(
  'ignore',
  'ignoring',
  'disregard',
  'disregarding',
  'forget',
  'forgetting',
  'override',
  'overriding',
  'bypass',
  'set aside',
  'discard',
  'abandon',
  'neglect',
  'dismiss',
  'skip',
  'drop',
  'pay no attention to',
  'take no notice of',
  'stop following',
  'do not follow',
  'don t follow',
  'dont follow',
  'no longer follow',
  'do not obey',
  'don t obey',
  'stop obeying',
);
const QUANTIFIER =
  '(?:(?:all|any|every|each) )?(?:of )?(?:the |your |my |these |those |its |their |our |any )?';
const PRIOR = any(
  'previous',
  'previously given',
  'prior',
  'above',
  'earlier',
  'preceding',
  'foregoing',
  'former',
  'original',
  'initial',
  'old',
  'existing',
  'current',
  'default',
  'system',
  'developer',
  'safety',
  'built in',
  'hidden',
  'standing',
  'given',
  'other',
  'above mentioned',
);
const ORDERS = any(
  'instructions?',
  'prompts?',
  'directives?',
  'guardrails?',
  'system (?:prompts?|messages?|instructions?)',
  'programming',
  'commands?',
  'orders',
);
const RULES_NOUN = any(
  'rules',
  'guidelines',
  'constraints',
  'restrictions',
  'policies',
  'safety (?:rules|guidelines|measures)',
);
/** Names that can only mean an AI reader. */
const AI_READER = any(
  'ai',
  'llm',
  'chatbot',
  'language model',
  'chatgpt',
  'gpt',
  'ai assistant',
  'ai agent',
  'ai model',
);
/** Names that also mean people and things: only with punctuation that makes them an address. */
const AMBIGUOUS_READER = '(?:assistant|agent|model|bot|claude|gemini|copilot)s?';

export const RULES: Rule[] = [
  {
    what: 'a fake role marker',
    patterns: [
      inFolded(/<\|\s*[a-z_]{2,30}\s*\|>/),
      inFolded(/\[\/?inst\]|<<\/?sys>>|<\/?(?:start_of_turn|end_of_turn|bos|eos)>/),
      inFolded(
        /<[ \t]{0,3}\/?[ \t]{0,3}(?:system|assistant|developer|tool|bot)(?:[_ -]?(?:prompt|message|instructions?|response|output|turn|override))?\s*>/,
      ),
      inFolded(
        /\[[ \t]{0,3}\/?[ \t]{0,3}(?:system|developer|admin|administrator|root|sys)\s+(?:prompt|message|instructions?|override|note)\s*\]/,
      ),
      inFolded(/"role"\s*:\s*"(?:system|developer|assistant|tool|function)"/),
      inFolded(/\{\{[ \t]{0,3}\/?[ \t]{0,3}(?:system|assistant|developer|admin|sys)\s*\}\}/),
      inFolded(
        /(?:^|\n)[ \t]*(?:#+[ \t]*)?(?:human|user)[ \t]*:.*\n(?:.*\n){0,6}?[ \t]*(?:#+[ \t]*)?(?:assistant|ai|model)[ \t]*:/,
      ),
    ],
  },
  {
    what: 'a fake end of the calendar data',
    patterns: [
      inFolded(
        /<[ \t]{0,3}\/?[ \t]{0,3}(?:calendar[_ -]?(?:data|event|events|content|text|entry|description)|event[_ -]?(?:data|text|description|details)|untrusted[_ -]?[a-z]*|external[_ -]?(?:data|content|input|text)|user[_ -]?(?:data|input|content|message|query|text)|tool[_ -]?(?:result|results|output|response|call|use|code)|function[_ -]?(?:results?|calls?|output|response)|search[_ -]?results?|system[_ -]?(?:prompt|message|instructions?)|im_start|im_end|instructions?|admin|prompt)\s*>/,
      ),
      inFolded(
        /\b(?:begin|start|end)(?:\s+of)?(?:\s+the)?\s+(?:system|developer|admin|hidden|secret|override|new)\s+(?:prompt|instructions?|message|directives?|section|block|rules)\b/,
      ),
      inFolded(
        /(?<=(?:[-=*#~_<>[\]{}|]{3}|[[<{])[ \t]{0,3})(?:begin|start|end)(?:[ \t]+of)?[ \t]+(?:[a-z]+[ \t]+){0,2}(?:instructions?|prompt|data|input|context|content|text)[ \t]{0,3}(?:[-=*#~_<>[\]{}|]{3}|\]|>|\})/,
      ),
      inFolded(
        /\b(?:end|close|closing) of (?:the )?(?:calendar|event|untrusted|external|user|tool) (?:data|content|input|text|output|result)\b/,
      ),
    ],
  },
  {
    what: 'a fake system prompt',
    patterns: [
      inFolded(
        /(?:^|\n)[ \t]*#{2,6}[ \t]*(?:system|assistant|developer|admin)(?:[ \t]+(?:prompt|message|instructions?|override|note|update|mode)){0,3}[ \t]*[:#]{0,8}[ \t]*(?:\n|$)/,
      ),
      inFolded(
        /(?:^|\n)[ \t]*#{1,6}[^\n]{0,200}?\b(?:system|developer|admin)\s+(?:prompt\s+|message\s+|instructions?\s+)?override\b/,
      ),
      ...phrase(
        `${any('system', 'developer', 'admin', 'sudo', 'root', 'security')} (?:prompt |instructions? |message )?override`,
      ),
      ...phrase(
        `override (?:the |your )?${any('system', 'developer')} ${any('prompt', 'instructions', 'message', 'settings')}`,
      ),
      ...phrase(
        `${any('developer', 'god', 'dan', 'jailbreak', 'jailbroken', 'unrestricted', 'debug', 'admin', 'sudo')} mode ${any('enabled', 'activated', 'on', 'engaged', 'unlocked')}`,
      ),
      ...phrase(
        `${any('enable', 'activate', 'enter', 'switch to', 'turn on', 'go into')} ${any('developer', 'god', 'dan', 'jailbreak', 'unrestricted')} mode`,
      ),
      ...phrase('do anything now'),
    ],
  },
  {
    what: 'an instruction to ignore previous instructions',
    patterns: [
      ...phrase(`${OVERRIDE} ${QUANTIFIER}(?:${PRIOR} ){1,3}(?:and ${PRIOR} )?${ORDERS}`),
      ...phrase(
        `${OVERRIDE} ${QUANTIFIER}(?:${PRIOR} ){1,3}${any('context', 'conversation', 'messages', 'text', 'content', 'rules', 'guidelines')} and ${ORDERS}`,
      ),
      ...phrase(
        `${OVERRIDE} (?:all|any|every|each|your) (?:of )?(?:the |your |my )?(?:${PRIOR} ){0,3}(?:${ORDERS}|${RULES_NOUN})`,
      ),
      ...phrase(
        `${OVERRIDE} ${QUANTIFIER}${any('above', 'previous', 'prior', 'preceding', 'foregoing', 'earlier', 'system', 'safety')} ${RULES_NOUN}`,
      ),
      ...phrase(
        `${any('ignore', 'disregard', 'forget')} ${any('everything', 'anything', 'all', 'whatever')} (?:(?:that )?(?:was |is |has been |you were |you have been |you ve been )?(?:said|written|stated|told|given|mentioned) )?${any('above', 'before', 'before this', 'previously', 'so far', 'prior to this', 'up to now', 'until now')}`,
      ),
      ...phrase(
        `${any('ignore', 'disregard', 'forget')} ${any('everything', 'anything', 'all', 'what', 'whatever')} (?:that )?you ${any('were', 'have been', 've been', 'are', 'got')} ${any('told', 'instructed', 'taught', 'given', 'programmed')}`,
      ),
      ...phrase(
        `${any('ignore', 'disregard', 'forget')} (?:the |your )?${any('system', 'developer')} ${any('prompt', 'message', 'instructions')}`,
      ),
      ...phrase(
        `${OVERRIDE} (?:the )?${any('instructions', 'prompt', 'directives')} ${any('above', 'before this', 'you were given', 'you received', 'you have')}`,
      ),
    ],
  },
  {
    what: 'an instruction to ignore previous instructions',
    patterns: [
      ...phrase(`${OVERRIDE} (?:all )?${any('previous', 'prior', 'above', 'earlier')} directions`),
      ...phrase(
        `${any('do not', 'don t', 'dont', 'must not', 'should not', 'never', 'stop')} ${any('follow', 'following', 'obey', 'obeying', 'listen to', 'comply with')} (?:the |your )?${any('user', 'user s', 'human', 'owner')}`,
      ),
      ...phrase(
        `your ${any('instructions', 'guidelines', 'rules', 'restrictions', 'safety filters', 'filters', 'policies', 'guardrails', 'safety rules', 'limits')} ${any('are', 'have been', 'were', 'is', 'are now', 'are hereby')} ${any('suspended', 'disabled', 'lifted', 'removed', 'revoked', 'void', 'cancelled', 'canceled', 'deactivated', 'turned off', 'off', 'no longer valid', 'no longer active', 'no longer in effect', 'overridden', 'replaced')}`,
      ),
      ...phrase(
        `${any('prioriti[sz]e', 'prefer', 'favou?r', 'put', 'rank')} ${any('this', 'the', 'these', 'event', 'calendar')}(?: [a-z]+){0,2} ${any('over', 'above', 'before')} (?:the |your |any |all )?${any('user', 'user s', 'users', 'human', 'owner')}`,
      ),
      inFolded(
        /(?:^|[\n.!?][ \t]*)(?:stop|halt|wait)[ \t]*[.!:]{1,3}[ \t]*(?:new|updated|different|real)\s+(?:instructions|task|orders|rules)\b/,
      ),
    ],
  },
  {
    what: 'an instruction to override the user',
    patterns: [
      inFolded(
        /\b(?:ignore|disregard|don't listen to|do not listen to|stop listening to|override)\s+(?:the|your)\s+user\b(?!\s+(?:research|interface|guide|manual|story|stories|journey|testing|tests?|feedback|experience|group|count|base|name|id))/,
      ),
      inFolded(
        /\b(?:bypass|skip|ignore|override|circumvent|disable)\s+(?:the\s+|your\s+)?(?:user(?:'s|’s)?\s+)(?:confirmation|approval|consent|permission|review|check)s?\b/,
      ),
    ],
  },
  {
    what: 'an attempt to replace the agent’s instructions',
    patterns: [
      ...phrase(
        `${any('new', 'updated', 'revised', 'real', 'actual', 'true', 'hidden', 'secret', 'additional', 'further', 'important', 'urgent', 'override', 'priority', 'special')} (?:system )?${any('instructions?', 'directives?', 'orders', 'commands', 'prompt', 'rules')} ${any('for', 'to')} (?:the |all |any |every |you the )?${AI_READER}s?`,
      ),
      inFolded(
        new RegExp(
          `\\b(?:new|updated|revised|real|actual|true|hidden|secret|additional|further|override|priority) (?:system )?(?:instructions?|directives?|orders|commands|prompt) (?:for|to) (?:the |all |any |every )?${AMBIGUOUS_READER}\\s*(?:[:,.!;\\-–—(]|$)`,
        ),
      ),
      ...phrase(
        `treat ${any('this', 'the following', 'these', 'the text below', 'this event', 'this description', 'this note', 'it', 'what follows')} (?:text )?as (?:your |the |a |an )?(?:new |real |actual |system |highest priority |top priority |priority |overriding ){0,3}${any('instructions?', 'commands?', 'orders', 'prompt', 'system prompt', 'directives?', 'system message')}`,
      ),
      inFolded(/\bnew system (?:instructions?|prompt|message|directives?|rules)\s*(?:[:\n]|-{2,}|$)/),
      ...phrase(
        `${any('the following', 'this', 'the text below', 'what follows', 'this text', 'this event', 'this message')} (?:text |message )?${any('is', 'are')} (?:a |an |the |your )?(?:new |real |actual |top priority |priority )?${any('system', 'developer', 'admin', 'administrator', 'priority', 'override')} ${any('instructions?', 'messages?', 'prompts?', 'commands?', 'directives?', 'orders?')}`,
      ),
      ...phrase(
        `your ${any('instructions', 'rules', 'guidelines', 'orders', 'task', 'objective', 'prompt', 'system prompt', 'directives', 'programming')} ${any('have', 'has')} ${any('changed', 'been changed', 'been updated', 'been replaced', 'been revised', 'been overridden', 'been superseded')}`,
      ),
      ...phrase(
        `${any('supersedes', 'overrides', 'replaces', 'takes precedence over', 'cancels', 'voids')} (?:all |any )?(?:of )?your (?:${any('previous', 'prior', 'earlier', 'original', 'current', 'existing')} )?${any('instructions', 'guidance', 'rules', 'directives', 'prompt', 'system prompt', 'programming', 'guidelines')}`,
      ),
      inFolded(
        /\b(?:here are |these are |below are |the following are )?your (?:new|updated|real|actual|true|revised) (?:instructions|orders|directives|prompt|system prompt|programming)\s*(?::|are\s*:|are (?:to|as follows)\b|follow\b)/,
      ),
      ...phrase(
        `${any('instructions', 'directives', 'orders')} ${any('for', 'to')} ${any('any', 'all', 'every')} ${AI_READER}s?`,
      ),
      ...phrase(
        `the ${any('above', 'previous', 'prior', 'earlier')} ${any('instructions', 'directives', 'prompt')} ${any('are', 'were', 'is', 'was')} ${any('void', 'invalid', 'cancelled', 'canceled', 'revoked', 'obsolete', 'fake', 'a test', 'no longer valid')}`,
      ),
    ],
  },
  {
    what: 'an attempt to give the agent a new role',
    patterns: [
      ...phrase(
        `${any('you are now', 'you re now', 'youre now', 'now you are', 'from now on you are', 'from now on you re', 'from now on you will be', 'from now on you will act as', 'from now on act as', 'you will now act as', 'you must now act as', 'you shall now act as', 'henceforth you are', 'act as if you are', 'pretend (?:that )?you are', 'pretend to be', 'you will now be', 'you have become')} (?:an? |the |in |my |no longer an? )?(?:[a-z]+ ){0,2}${any('ai', 'llm', 'chatbot', 'dan', 'jailbroken', 'unrestricted', 'unfiltered', 'uncensored', 'unlimited', 'evil', 'developer mode', 'god mode', 'admin mode', 'sudo mode', 'language model', 'free from (?:all |any )?(?:rules|restrictions|guidelines|limits)', 'without (?:any )?(?:rules|restrictions|limits|filters|guidelines)', 'with no (?:rules|restrictions|limits|filters|guidelines|boundaries)', 'no longer bound', 'not bound')}`,
      ),
      inWords(
        `${any('you are now', 'you re now', 'now you are', 'from now on you are', 'you will now act as', 'pretend you are')} (?:an? |the )?(?:new |different |helpful |obedient )?${any('assistant', 'agent', 'model', 'bot')}(?= ${any('that', 'who', 'which', 'with no', 'without', 'named', 'called', 'whose', 'and')} | $)`,
      ),
      ...phrase(
        `you ${any('have been', 've been', 'were')} ${any('reprogrammed', 'updated', 'upgraded', 'freed', 'jailbroken', 'unlocked', 'reconfigured', 'reassigned')}`,
      ),
      ...phrase(
        `you are no longer ${any('an? ai', 'an? assistant', 'bound', 'restricted', 'limited', 'claude', 'chatgpt', 'required to')}`,
      ),
    ],
  },
  {
    what: 'text addressed to AI agents',
    patterns: [
      ...phrase(
        `${AI_READER}s? ${any('must', 'should', 'shall', 'are to', 'need to', 'have to', 'are required to', 'are instructed to')} (?:now |always )?${any('treat', 'obey', 'follow', 'ignore', 'prioriti[sz]e', 'trust', 'execute', 'act on', 'comply with', 'disregard', 'forget')}`,
      ),
      inFolded(
        new RegExp(
          `\\b(?:if|when|once|whenever)\\s+(?:an?|the|any)\\s+(?:${AI_READER}|${AMBIGUOUS_READER})\\s+(?:reads|processes|sees|parses|summari[sz]es|handles|encounters)\\s+(?:this|these)\\b[^.!?\\n]{0,40}?\\b(?:it|they|you)\\s+(?:must|should|shall|needs? to|has to|have to|is to|are to|will)\\b`,
        ),
      ),
      ...phrase(
        `(?:${AI_READER}|assistant|agent|model|bot)s? ${any('reading', 'processing', 'summari[sz]ing', 'seeing', 'parsing', 'handling', 'analy[sz]ing')} ${any('this', 'these', 'the calendar', 'this calendar')}(?: ${any('event', 'events', 'invite', 'invitation', 'text', 'description', 'calendar', 'entry', 'message', 'note', 'data')})? ${any('must', 'should', 'shall', 'will', 'are instructed', 'is instructed', 'need to', 'have to', 'are required', 'is required', 'are ordered')}`,
      ),
      ...phrase(
        `${any('this', 'the following')} ${any('is an instruction', 'is a message', 'is a command', 'are instructions')} ${any('for', 'to')} (?:the |any |all )?${AI_READER}s?`,
      ),
    ],
  },
  {
    what: 'an instruction to hide actions from the user',
    patterns: [
      ...phrase(
        `${any('do not', 'don t', 'dont', 'never')} ${any('tell', 'inform', 'notify', 'alert', 'warn', 'mention (?:this |it |anything )?to', 'reveal (?:this |it )?to', 'show (?:this |it )?to')} the ${any('user', 'human', 'owner', 'calendar owner')}`,
      ),
      ...phrase(
        `without ${any('telling', 'informing', 'notifying', 'alerting', 'asking', 'consulting', 'warning')} the ${any('user', 'human', 'calendar owner')}`,
      ),
      ...phrase(
        `${any('do not', 'don t', 'dont', 'never')} ${any('let', 'make')} the ${any('user', 'human')} ${any('know', 'aware', 'see', 'notice', 'find out')}`,
      ),
      ...phrase(
        `${any('keep', 'hide')} ${any('this', 'it', 'these', 'that', 'everything')} (?:secret |hidden |confidential )?from the ${any('user', 'human')}`,
      ),
      ...phrase(
        `the ${any('user', 'human')} ${any('must', 'should', 'shall', 'may', 'can')} (?:not|never) ${any('know', 'see', 'find out', 'be told', 'notice', 'learn')}`,
      ),
    ],
  },
  {
    what: 'a fake system prompt',
    patterns: [
      inFolded(
        /(?:^|\n)[ \t>*_[(#-]{0,8}(?:system|developer[ \t]*(?:prompt|message|instructions?))[ \t]*(?:prompt|message|instructions?|override|note)?[\])*_ \t]{0,8}:[^\n]{0,300}?\b(?:you|your|yourself|ignore|disregard|forget|obey|comply|always|never|must|reveal|disclose|print|output|call|invoke|delete|remove|cancel|send|forward|share|export|pretend|act as|new rules?|rules|instructions?)\b/,
      ),
      inFolded(
        /\bsystem\s+prompt\s*:\s*(?:you|your|ignore|disregard|forget|obey|always|never|from now on)\b/,
      ),
      inFolded(
        /(?:^|\n)[ \t]*(?:[>*_(#-][ \t]*){0,6}(?:\[[ \t]*(?:assistant|ai|model)[ \t]*\][ \t]*:?|(?:assistant|ai|model)[)*_ \t]{0,6}:)[ \t]*(?:sure|certainly|of course|understood|ok(?:ay)?|absolutely|i will|i'll|i’ll|i have|i've|i am going to|i'm going to|will do|done|deleting|cancell?ing|forwarding|sharing|removing|sending)\b/,
      ),
    ],
  },
  {
    what: 'a smuggled tool call',
    patterns: [
      inFolded(
        /"(?:tool_calls|function_call|tool_use|tool_code)"\s*:|<\/?(?:tool_call|tool_use|function_calls?|invoke|antml:[a-z_]+)\b|"method"\s*:\s*"tools\/call"/,
      ),
      inFolded(
        /"(?:name|tool|tool_name|function|recipient_name)"\s*:\s*"[a-z_][\w.-]*"[\s\S]{0,300}?"(?:arguments|args|parameters|input)"\s*:\s*\{|"(?:arguments|args|parameters|input)"\s*:\s*\{[\s\S]{0,300}?"(?:name|tool|tool_name|function|recipient_name)"\s*:\s*"[a-z_][\w.-]*"/,
      ),
    ],
  },
  {
    what: 'an instruction to call a tool',
    patterns: [
      inFolded(
        new RegExp(
          `\\b(?:call|calling|invoke|invoking|use|using|run|running|execute|executing|trigger|fire|issue|perform|make a call to|do a)\\s+(?:(?:the|a|an|your)\\s+)?(?:tool\\s+|function\\s+)?[\`'"*]*${TOOL_NAME}\\b(?!\\.[a-z])`,
        ),
      ),
      inFolded(new RegExp(`\\b${CALGATE_TOOL}\\s*\\(`)),
      inFolded(new RegExp(`\\b${CALGATE_TOOL}\\b[\`'"*]{0,3}\\s+(?:tool|function)\\b`)),
      inFolded(
        /\b(?:call|invoke|use|run|execute|trigger)\s+(?:the\s+)?(?:create|update|delete|cancel|move|patch|remove|list|get|book|respond to|quick add)\s+(?:events?|calendars?|bookings?|attendees)\s+(?:tool|function)\b/,
      ),
    ],
  },
];
