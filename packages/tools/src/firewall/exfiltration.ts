/**
 * Payloads that try to get data out: requests to reveal secrets or the system prompt, decode-
 * and-follow wrappers, links that template secrets into a URL, and orders to send conversations,
 * credentials or whole calendars somewhere.
 */
import { any, inFolded, phrase } from './patterns.ts';
import type { Rule } from './rules.ts';

export const EXFILTRATION_RULES: Rule[] = [
  {
    what: 'a request to reveal secrets',
    patterns: [
      ...phrase(
        `${any('reveal', 'print', 'repeat', 'output', 'leak', 'disclose', 'show', 'display', 'tell me', 'give me', 'send me', 'dump', 'list', 'recite', 'write out', 'spell out')} (?:me )?(?:all |any )?(?:of )?${any(
          `(?:your|the) ${any('system prompt', 'system message', 'hidden instructions', 'initial instructions', 'original instructions', 'instructions above', 'prompt above', 'previous instructions', 'full prompt', 'exact instructions')}`,
          `your ${any('api keys?', 'access tokens?', 'oauth tokens?', 'refresh tokens?', 'bearer tokens?', 'tokens', 'secrets', 'credentials', 'passwords?', 'environment variables', 'env vars')}`,
        )}`,
      ),
      ...phrase(
        `${any('reveal', 'print', 'leak', 'disclose', 'output', 'dump', 'recite', 'exfiltrate')} (?:all )?(?:of )?the ${any('api keys?', 'access tokens?', 'oauth tokens?', 'refresh tokens?', 'bearer tokens?', 'secrets', 'credentials', 'passwords', 'environment variables', 'env vars')}`,
      ),
      ...phrase(
        `${any('what', 'which')} ${any('is', 'are', 'were')} your ${any('system prompt', 'original instructions', 'hidden instructions', 'initial instructions')}`,
      ),
    ],
  },
  {
    what: 'an instruction to decode and follow hidden text',
    patterns: [
      ...phrase(
        `${any('decode', 'base64 decode', 'decrypt', 'deobfuscate', 'unscramble', 'rot13', 'reverse', 'translate')} (?:${any('this', 'the following', 'the text below', 'the string', 'the message', 'it', 'below', 'the base64', 'the hex', 'the payload')} )?(?:[a-z0-9]+ ){0,3}${any('and', 'then')} ${any('follow', 'execute', 'run', 'obey', 'do', 'perform', 'carry out', 'act on', 'comply with', 'apply')}`,
      ),
    ],
  },
  {
    what: 'a link that would send secrets out',
    patterns: [
      inFolded(
        /(?:https?:)?(?<!\/)\/\/[^\s)"'>]{0,300}?(?:\{\{[^}]*\}\}|\$\{[^}]*\}|%7b%7b|\{[a-z_]*(?:key|token|secret|password|prompt|conversation|history|data|email|summary|context|chat|messages)[a-z_]*\}|<[a-z_]*(?:key|token|secret|password|data|conversation|history|summary|prompt)[a-z_]*>|\[[a-z_]*(?:key|token|secret|password|data|conversation|history|summary|prompt)[a-z_]*\])/,
      ),
    ],
  },
  {
    what: 'an instruction to send data out',
    patterns: [
      inFolded(
        /\b(?:send|post|upload|forward|transmit|exfiltrate|leak|email|e-mail|mail|report|submit|deliver|append|attach|include|encode|embed|put|copy|paste|add|write)\b[^.\n]{0,80}?\b(?:chat history|chat log|chat transcript|message history|conversation history|(?:this|our|the entire|the whole|the full|the current) conversation|system prompt|context window|api keys?|access tokens?|auth tokens?|session tokens?|oauth tokens?|bearer tokens?|refresh tokens?|passwords?|credentials|secrets|cookies|session data)\b[^.\n]{0,80}?(?:https?:\/\/|\bwww\.|\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b|\b(?:url|link|endpoint|webhook|server|query string|query parameter)\b)/,
      ),
      inFolded(
        /\b(?:send|post|upload|forward|transmit|exfiltrate|leak|email|e-mail|mail|copy|export|sync|dump)\b[^.\n]{0,40}?\b(?:all (?:of )?(?:the |my |your |their |his |her )?(?:events|emails|contacts|calendars?|meetings|appointments|messages|bookings)|(?:the |your |their |my |the user'?s )?(?:entire|whole|full|complete) (?:calendar|inbox|schedule|contact list|address book|event list))\b[^.\n]{0,80}?(?:https?:\/\/|\bwww\.|\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b)/,
      ),
      inFolded(
        /\b(?:replace|fill in|substitute|swap|insert)\b[^.\n]{0,60}\b(?:placeholder|x{3,}|data|value|parameter)\b[^.\n]{0,60}\b(?:with|by)\b[^.\n]{0,40}\b(?:conversation|chat|summary|history|system prompt|secrets?|api keys?|tokens?|passwords?|credentials|all (?:events|emails|contacts))\b/,
      ),
    ],
  },
];

/** Case matters for these, so they run on the NFKC text rather than the folded one. */
export const CASED_RULES: Rule[] = [
  {
    what: 'a link that would send secrets out',
    patterns: [
      inFolded(
        /https?:\/\/[^\s)"'>]{0,300}?[?&/=](?:[A-Z0-9]+_){0,4}(?:CONVERSATION|CHAT_HISTORY|SYSTEM_PROMPT|PROMPT|SECRETS?|API_?KEYS?|ACCESS_TOKENS?|AUTH_TOKENS?|TOKENS?|PASSWORDS?|CREDENTIALS|CALENDAR_DATA|USER_DATA|ALL_EVENTS|ALL_EMAILS)(?:_[A-Z0-9]+)*(?![A-Za-z0-9_])/,
      ),
    ],
  },
];
