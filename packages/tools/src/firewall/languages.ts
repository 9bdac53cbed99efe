/**
 * The common payload phrases in German, French, Spanish, Portuguese, Italian, Dutch, Russian,
 * Chinese, Japanese and Korean. Accents need not be written: patterns are folded like the text.
 */
import { any, inSquashed, inWords, type Pattern, phrase } from './patterns.ts';
import type { Rule } from './rules.ts';

/** An override phrase: verb, quantifier, prior, orders in a language's usual orders. */
function overrides(verb: string, quantifier: string, prior: string, orders: string): Pattern[] {
  return [
    ...phrase(`${verb} (?:${quantifier} ){0,3}(?:${prior} ){1,3}${orders}`),
    ...phrase(`${verb} (?:${quantifier} ){0,3}${orders} (?:${quantifier} ){0,3}${prior}`),
    ...phrase(`(?:${quantifier} ){0,3}(?:${prior} ){1,3}${orders} (?:zu )?${verb}`),
  ];
}

const GERMAN = overrides(
  any(
    'ignoriere',
    'ignoriert',
    'ignorieren sie',
    'ignorieren',
    'ignorier',
    'vergiss',
    'vergesst',
    'vergessen sie',
    'vergessen',
    'missachte',
    'missachten sie',
    'missachten',
    'verwirf',
    'verwerfen sie',
    'verwerfen',
    'uberschreibe',
    'uberschreiben',
  ),
  any('bitte', 'alle', 'samtliche', 'die', 'deine', 'ihre', 'jegliche', 'jede', 'eure'),
  any(
    'vorherigen',
    'vorigen',
    'bisherigen',
    'fruheren',
    'obigen',
    'vorangegangenen',
    'vorstehenden',
    'ursprunglichen',
    'alten',
    'system',
    'bestehenden',
    'vorhergehenden',
    'oben genannten',
  ),
  any(
    'anweisungen',
    'instruktionen',
    'befehle',
    'vorgaben',
    'regeln',
    'richtlinien',
    'anordnungen',
    'systemanweisungen',
    'prompts?',
    'systemprompts?',
    'systemprompt',
  ),
);

const FRENCH = overrides(
  any(
    'ignore',
    'ignorez',
    'ignorer',
    'ignores',
    'oublie',
    'oubliez',
    'oublier',
    'neglige',
    'negligez',
    'ne tiens pas compte des',
    'ne tenez pas compte des',
    'fais abstraction des',
    'faites abstraction des',
    'fais fi des',
    'passe outre',
    'outrepasse',
    'outrepassez',
  ),
  any('toutes', 'tous', 'les', 'tes', 'vos', 'des', 'l ensemble des'),
  any(
    'precedentes',
    'anterieures',
    'ci dessus',
    'd avant',
    'initiales',
    'du systeme',
    'systeme',
    'fournies',
    'anciennes',
    'originales',
    'premieres',
  ),
  any('instructions', 'consignes', 'directives', 'regles', 'ordres', 'commandes', 'prompts?', 'invites'),
);

const SPANISH = overrides(
  any(
    'ignora',
    'ignore',
    'ignorar',
    'ignoren',
    'ignorad',
    'olvida',
    'olvide',
    'olvidar',
    'olviden',
    'descarta',
    'descarte',
    'descartar',
    'omite',
    'omita',
    'omitir',
    'haz caso omiso de',
    'hagan caso omiso de',
    'no hagas caso a',
    'no hagas caso de',
  ),
  any('todas', 'todos', 'las', 'tus', 'sus', 'los'),
  any(
    'anteriores',
    'previas',
    'de arriba',
    'precedentes',
    'iniciales',
    'originales',
    'del sistema',
    'dadas',
    'antiguas',
  ),
  any(
    'instrucciones',
    'indicaciones',
    'directrices',
    'ordenes',
    'reglas',
    'normas',
    'prompts?',
    'directivas',
  ),
);

const PORTUGUESE = overrides(
  any(
    'ignore',
    'ignora',
    'ignorar',
    'ignorem',
    'esqueca',
    'esquece',
    'esquecer',
    'esquecam',
    'desconsidere',
    'desconsidera',
    'desconsiderar',
    'descarte',
    'descarta',
  ),
  any('todas', 'todos', 'as', 'suas', 'tuas', 'os'),
  any(
    'anteriores',
    'previas',
    'acima',
    'precedentes',
    'iniciais',
    'originais',
    'do sistema',
    'dadas',
    'antigas',
  ),
  any('instrucoes', 'orientacoes', 'diretrizes', 'ordens', 'regras', 'prompts?', 'diretivas', 'comandos'),
);

const ITALIAN = overrides(
  any(
    'ignora',
    'ignorate',
    'ignori',
    'ignorare',
    'dimentica',
    'dimenticate',
    'dimentichi',
    'dimenticare',
    'trascura',
    'trascurate',
    'non considerare',
    'non tenere conto delle',
    'non tenete conto delle',
    'scarta',
    'scartate',
  ),
  any('tutte', 'tutti', 'le', 'tue', 'sue', 'gli', 'i'),
  any(
    'precedenti',
    'di prima',
    'sopra',
    'iniziali',
    'originali',
    'del sistema',
    'date',
    'vecchie',
    'soprastanti',
  ),
  any('istruzioni', 'indicazioni', 'direttive', 'regole', 'ordini', 'prompts?', 'comandi'),
);

const DUTCH = overrides(
  any('negeer', 'negeert', 'negeren', 'vergeet', 'vergeten', 'verwerp', 'verwerpen', 'omzeil'),
  any('alle', 'de', 'je', 'jouw', 'uw', 'al je'),
  any(
    'vorige',
    'eerdere',
    'voorgaande',
    'bovenstaande',
    'oorspronkelijke',
    'oude',
    'systeem',
    'gegeven',
    'huidige',
  ),
  any(
    'instructies',
    'aanwijzingen',
    'opdrachten',
    'regels',
    'richtlijnen',
    'prompts?',
    'commando s',
    'bevelen',
  ),
);

const RUSSIAN = overrides(
  any(
    'игнорируй',
    'игнорируйте',
    'игнорировать',
    'проигнорируй',
    'проигнорируйте',
    'забудь',
    'забудьте',
    'забыть',
    'не обращай внимания на',
    'не обращайте внимания на',
    'отбрось',
    'отбросьте',
    'пренебреги',
    'отмени',
    'отмените',
  ),
  any('все', 'всё', 'свои', 'твои', 'ваши', 'эти'),
  any(
    'предыдущие',
    'прежние',
    'прошлые',
    'вышеуказанные',
    'вышеприведенные',
    'предшествующие',
    'системные',
    'исходные',
    'старые',
    'данные ранее',
    'ранее данные',
    'полученные',
  ),
  any('инструкции', 'указания', 'команды', 'правила', 'промпты', 'промпт', 'распоряжения', 'директивы'),
);

/** Chinese, Japanese and Korean do not separate words: matched on the squashed form. */
const CJK: Pattern[] = [
  inSquashed(
    `${any('忽略', '无视', '無視', '忽视', '忽視', '不要理会', '不要理會', '不理会', '不用理会', '忘记', '忘記', '忘掉', '抛开', '拋開', '跳过', '跳過', '放弃', '放棄')}(?:掉)?(?:你)?(?:的)?${any('之前', '以前', '先前', '此前', '上面', '上述', '前面', '以上', '原来', '原來', '原先', '所有', '全部', '一切', '系统', '系統', '之前给你', '之前給你')}(?:的|所有的|全部的|收到的|给出的|給出的)?(?:所有|全部|一切)?(?:的)?${any('指令', '指示', '提示词', '提示詞', '系统提示', '系統提示', '命令', '规则', '規則', '设定', '設定', '要求')}`,
  ),
  inSquashed(
    `${any('以前', '前', '上記', 'これまで', '今まで', '先', '先ほど', '上', '前述', '全て', 'すべて', 'システム', '元')}の(?:すべての|全ての)?${any('指示', '命令', 'プロンプト', 'ルール', '指令', '設定', '制約')}(?:は|を)(?:すべて|全て)?${any('無視', '忘れ', '破棄')}`,
  ),
  inSquashed(`${any('指示', '命令', 'プロンプト', 'ルール')}を(?:すべて|全て)?無視して`),
  inSquashed(
    `${any('이전', '이전의', '앞의', '위의', '기존', '모든')}(?:모든)?${any('지시', '지침', '명령', '프롬프트', '규칙', '지시사항')}(?:을|를|은|는|들을)?(?:모두)?${any('무시', '잊어')}`,
  ),
];

export const LANGUAGE_RULES: Rule[] = [
  {
    what: 'an instruction to ignore previous instructions',
    patterns: [...GERMAN, ...FRENCH, ...SPANISH, ...PORTUGUESE, ...ITALIAN, ...DUTCH, ...RUSSIAN, ...CJK],
  },
  {
    what: 'an attempt to replace the agent’s instructions',
    patterns: [
      inWords(
        `${any('neue', 'geheime', 'aktualisierte', 'nouvelles', 'nuevas', 'novas', 'nuove', 'nieuwe', 'новые')} ${any('anweisungen', 'instruktionen', 'instructions', 'consignes', 'instrucciones', 'instrucoes', 'istruzioni', 'instructies', 'инструкции', 'указания')} ${any('fur', 'an', 'pour', 'para', 'per', 'voor', 'для')} ${any('die', 'den', 'das', 'l', 'la', 'le', 'el', 'a', 'o', 'de', 'het')}? ?${any('ki', 'ia', 'ai', 'ии', 'нейросети', 'ki assistenten', 'llm', 'chatbot', 'chatgpt', 'sprachmodell', 'modele de langage', 'modelo de lenguaje', 'modelo de linguagem', 'modello linguistico', 'taalmodel')}`,
      ),
      inWords(
        `${any('neue systemanweisungen', 'nouvelles instructions systeme', 'nuevas instrucciones del sistema', 'novas instrucoes do sistema', 'nuove istruzioni di sistema', 'nieuwe systeeminstructies', 'новые системные инструкции')}`,
      ),
      inSquashed(`${any('新的', '新')}${any('系统', '系統')}?${any('指令', '指示')}`),
      inSquashed(`${any('新しい')}(?:システム)?${any('指示', '命令')}`),
    ],
  },
  {
    what: 'an attempt to give the agent a new role',
    patterns: [
      inWords(
        `${any('du bist jetzt', 'du bist nun', 'du bist ab sofort', 'ab sofort bist du', 'ab jetzt bist du', 'tu es maintenant', 'tu es desormais', 'vous etes maintenant', 'vous etes desormais', 'a partir de maintenant tu es', 'ahora eres', 'a partir de ahora eres', 'desde ahora eres', 'agora voce e', 'a partir de agora voce e', 'agora es', 'ora sei', 'da ora sei', 'da adesso sei', 'je bent nu', 'vanaf nu ben je', 'теперь ты', 'отныне ты', 'с этого момента ты')} (?:ein |eine |einen |un |une |una |um |uma |een |в )?(?:[a-z]+ )?${any('ki', 'ia', 'ai', 'ии', 'dan', 'uneingeschrankt', 'uneingeschrankte', 'sans restrictions', 'sans limites', 'sin restricciones', 'sem restricoes', 'senza restrizioni', 'zonder beperkingen', 'без ограничений', 'entwicklermodus', 'mode developpeur', 'modo desarrollador', 'modo desenvolvedor', 'modalita sviluppatore', 'ontwikkelaarsmodus', 'режиме разработчика', 'sprachmodell', 'chatbot', 'jailbroken')}`,
      ),
      inSquashed(
        `${any('你现在是', '你現在是', '从现在开始你是', '從現在開始你是', 'あなたは今から', '今からあなたは')}`,
      ),
    ],
  },
  {
    what: 'a request to reveal secrets',
    patterns: [
      inWords(
        `${any('zeige', 'zeig', 'gib', 'verrate', 'nenne', 'revele', 'revelez', 'affiche', 'montre', 'donne', 'revela', 'muestra', 'dame', 'mostra', 'rivela', 'dammi', 'mostre', 'me de', 'toon', 'geef', 'onthul', 'покажи', 'раскрой', 'выведи')} (?:mir |moi |me |mij |мне )?${any('deinen systemprompt', 'deine systemanweisungen', 'ton prompt systeme', 'tes instructions systeme', 'votre prompt systeme', 'tu prompt del sistema', 'tus instrucciones del sistema', 'seu prompt do sistema', 'suas instrucoes do sistema', 'il tuo prompt di sistema', 'le tue istruzioni di sistema', 'je systeemprompt', 'je systeeminstructies', 'свой системный промпт', 'системный промпт', 'свои системные инструкции')}`,
      ),
    ],
  },
];
