// What the triage classifier reads in a ticket besides its words: hand-designed cues
// (stack traces, expected/actual, feature-request and question phrasing, …), and the
// text helpers that separate prose from code, title from body.

/** Text beyond this is not read: long logs add noise, not signal. */
export const MAX_CLASSIFIED_CHARS = 12_000;

const has = (re: RegExp, s: string) => (re.test(s) ? 1 : 0);
const count = (re: RegExp, s: string) => s.match(re)?.length ?? 0;
/** 0, then rising towards 1 with diminishing returns. */
const saturate = (n: number, half: number) => n / (n + half);

// Hand-designed cues, each a 0–1 feature named `h:<cue>`. They carry what a few
// hundred examples cannot teach word by word: the shapes of bug reports,
// feature requests and questions.
const STACK_TRACE = [
  /^\s+at [\w$.<>[\]]+ ?\(.*:\d+(:\d+)?\)\s*$/m,
  /^\s+at .+:\d+:\d+\)?\s*$/m,
  /traceback \(most recent call last\)/i,
  /^\s*File ".+", line \d+/m,
  /exception in thread/i,
  /\b(segmentation fault|core dumped|sigsegv|sigabrt|stack overflow|stacktrace|stack trace|backtrace)\b/i,
  /^\s*#\d+\s+0x[0-9a-f]+/im,
  /\w+(Error|Exception): \S/,
  /\b(panicked at|fatal error:|unhandled (promise )?rejection|uncaught (type)?error)/i,
];
/** Words of failure: evidence that something is broken. */
const ERROR_WORDS =
  /\b(error|errors|exception|exceptions|crash\w*|fail\w*|broken|bug|bugs|buggy|wrong|incorrect\w*|unexpected\w*|regression|freez\w*|hangs|hanging|glitch\w*|corrupt\w*|doesn'?t work|does not work|not working|isn'?t working|stopped working)\b/gi;
/** Words of difficulty: anyone stuck says them, whether the product is broken, lacking or misunderstood. */
const DIFFICULTY_WORDS =
  /\b(issue|issues|problem|problems|can'?t|cannot|unable|won'?t|stuck|invalid)\b/gi;
const EXPECTED_ACTUAL =
  /\b(expected (behaviou?r|result|output|outcome)|actual (behaviou?r|result|output|outcome)|current behaviou?r|observed behaviou?r|what (happened|happens) instead|instead (of|it)|but (instead|it|got|i get|i got|nothing)|should (be|have|work|show|return|display)\b.{0,80}\bbut\b)/i;
const REPRO =
  /\b(steps to reproduce|to reproduce|repro steps|reproduction steps|reproducible|minimal (reproduction|example|repro)|how to reproduce|reproduce the (issue|bug|problem)|reproduces|repro)\b/i;
const REGRESSION =
  /\b(used to work|worked (fine |well )?(before|in|until|previously)|stopped working|no longer|after (upgrading|updating|the (latest )?update|the upgrade)|since (upgrading|updating|the (latest )?update|version|v\d)|broke(n)? (after|since|in)|regress\w*)\b/i;
const ENV_INFO =
  /\b(version|os|operating system|browser|platform|environment|system information|node ?js|python|windows|macos|mac os|ubuntu|linux|android|ios|chrome|firefox|safari)\s*[:=]|\b(v?\d+\.\d+\.\d+)\b|\b(windows (10|11)|macos \d+|ubuntu \d+|android \d+|ios \d+)\b/i;
const FEATURE_PHRASES =
  /\b(feature request|would (be|it be) (nice|great|useful|helpful|awesome|good|cool)|it'?d be (nice|great|useful)|(nice|good) to have|would (love|like) (to see|to have|the ability|an? option|support)|please (add|consider|support|allow|make|provide|implement)|could you (add|support|consider|implement|provide|make it)|can you (add|support|implement)|add (support|an? option|the ability|a way|a setting|a button|a flag)|support for|ability to|option to|allow (users|us|me|people|admins|developers) to|make it possible|it should be possible|there is no way to|there'?s no way to|no option to|currently (there is|it is) (no|not)|enhancement|proposal|propose|suggestion|suggest (adding|that)|request(ing)? (a|an|the) (feature|option|ability)|wish(list)?|would appreciate)\b/gi;
const FEATURE_TEMPLATE =
  /\b(is your feature request related to a problem|describe the solution you'?d like|describe alternatives you'?ve considered|alternatives considered|motivation|proposed (solution|api|change|feature)|use ?case|who will benefit|will this change the current api)\b/gi;
const QUESTION_PHRASES =
  /\b(how (do|can|should|would) (i|we|you|one)|how to|is it possible|is there (a|any) (way|option|setting|method|function|api|plan|limit|difference)|can (i|we|you) (use|do|get|set|make|change|have|run|connect|export|import|find)|what (is|are|does|should|would) (the|a|an|my|our|it)|what'?s the|why (does|do|is|are|would|can'?t|doesn'?t)|where (can|do|is|are|should) (i|we|the)|which (one|version|plan|option|is)|does (it|this|anyone|the|your)|do you (support|have|offer|plan|know)|any (idea|ideas|help|advice|suggestions|pointers|hints)|i'?m (trying|wondering|not sure|confused|new)|i am (trying|wondering|not sure|confused|new)|i was wondering|not sure (how|if|whether|what)|could (someone|anyone|you) (explain|help|clarify|tell)|please (help|explain|clarify|advise)|help me|need (help|advice|guidance)|best (way|practice|practices|approach)|recommended (way|approach)|difference between|question)\b/gi;
const DOCS =
  /\b(documentation|docs|doc page|readme|api reference|reference page|docstring|tutorial|guide|getting started|quickstart|changelog|release notes|man page|wiki|typo in|example in the|code sample|broken link|dead link|outdated|out of date|undocumented|not documented|missing from the)\b/gi;
const TRYING =
  /\b(i'?m trying to|i am trying to|i tried to|i want to|i need to|i'?d like to|we want to|we need to|trying to figure out|how would i|my goal is)\b/i;
const HELP =
  /\b(help|stuck|advice|guidance|clarif\w*|confus\w*|understand\w*|explain\w*|newbie|beginner|learn\w*)\b/gi;
/** Setting up, building or installing: the asker's own environment, where support requests live. */
const SETUP =
  /\b(install\w*|setup|set up|pip|conda|npm install|apt(-get)?|brew|build(ing)? (it )?from source|compil\w*|cmake|makefile|linker|undefined reference|importerror|modulenotfounderror|no module named|dll|shared (object|library)|cuda|cudnn|drivers?|virtualenv|venv|docker(file)?|environment variables?|path variable|permission denied|proxy|firewall)\b/gi;
/** The asker's own code, data or machine. */
const MINE =
  /\b(my (code|model|script|app|application|project|program|setup|environment|machine|data|dataset|function|config|laptop|pc|computer|system|server)|in my|on my (machine|computer|laptop|pc|server)|for me)\b/gi;
/** The reporter calls it a defect. */
const BUG_CLAIM =
  /\b(this is a bug|(is|as) a bug|looks like a bug|seems (like|to be) a bug|bug in|should(n'?t| not) (crash|happen|fail|throw|hang)|is broken|are broken|is wrong|are wrong)\b/i;
const GREETING = /^\s*(hi|hello|hey|dear|good (morning|afternoon|evening)|greetings)\b/i;
const THANKS = /\b(thanks|thank you|thx|appreciate (it|any))\b/i;

const TITLE_QUESTION =
  /^(how|what|why|where|when|which|who|can|could|is|are|does|do|should|would|will|any|help|question)\b|\?\s*$/i;
const TITLE_FEATURE =
  /^(\[?(feature|feat|request|proposal|enhancement|rfc|idea|suggestion)\b|add(ing)?\b|support\b|allow\b|enable\b|provide\b|implement\b|introduce\b|make\b|expose\b|option\b|ability\b|please add|would be nice|new\b)/i;
const TITLE_BUG =
  /\b(error|errors|crash\w*|fail\w*|broken|bug|exception|not working|doesn'?t work|does not work|can'?t|cannot|unable|wrong|incorrect|invalid|missing|regression|freez\w*|hang\w*|leak|throws?|undefined|null|nan|segfault|warning|issue with)\b/i;

/** The first line when the text looks like "title\n\nbody" (GitHub issues, email subjects). */
export function titleOf(text: string): string {
  const nl = text.indexOf('\n');
  const first = (nl < 0 ? text : text.slice(0, nl)).trim();
  return first.length <= 200 ? first : '';
}

export function handFeatures(raw: string): Record<string, number> {
  const text = raw.slice(0, MAX_CLASSIFIED_CHARS);
  const prose = stripCode(text);
  const title = titleOf(text);
  const questionMarks = count(/\?(\s|$)/g, prose);
  return {
    'h:stack_trace': STACK_TRACE.some((re) => re.test(text)) ? 1 : 0,
    'h:code_block': has(/```|^( {4}|\t)\S/m, text),
    'h:error_words': saturate(count(ERROR_WORDS, prose), 2),
    'h:difficulty_words': saturate(count(DIFFICULTY_WORDS, prose), 2),
    'h:expected_actual': has(EXPECTED_ACTUAL, prose),
    'h:repro': has(REPRO, prose),
    'h:regression': has(REGRESSION, prose),
    'h:env_info': has(ENV_INFO, text),
    'h:feature_phrases': saturate(count(FEATURE_PHRASES, prose), 1),
    'h:feature_template': saturate(count(FEATURE_TEMPLATE, prose), 1),
    'h:question_phrases': saturate(count(QUESTION_PHRASES, prose), 1),
    'h:question_marks': saturate(questionMarks, 1),
    'h:docs': saturate(count(DOCS, prose), 1),
    'h:trying': has(TRYING, prose),
    'h:help': saturate(count(HELP, prose), 1),
    'h:setup': saturate(count(SETUP, prose), 1),
    'h:mine': saturate(count(MINE, prose), 1),
    'h:bug_claim': has(BUG_CLAIM, prose),
    'h:greeting': has(GREETING, prose),
    'h:thanks': has(THANKS, prose),
    'h:title_question': title ? has(TITLE_QUESTION, title) : 0,
    'h:title_feature': title ? has(TITLE_FEATURE, title) : 0,
    'h:title_bug': title ? has(TITLE_BUG, title) : 0,
  };
}

/** Replaces fenced code, indented code, stack frames, HTML tags and URLs, which are noise for word features. */
export function stripCode(text: string): string {
  return text
    .replace(/```[\s\S]*?(```|$)/g, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<\/?[a-z][\w-]*(\s[^<>]*)?\/?>/gi, ' ')
    .replace(/^( {4}|\t).*$/gm, ' ')
    .replace(/^\s*at .*$/gm, ' ')
    .replace(/https?:\/\/\S+/g, ' zzurl ')
    .replace(/`[^`\n]*`/g, ' zzcode ');
}

/**
 * Word tokens for n-grams: lower case, apostrophes dropped. Numbers and versions
 * become one placeholder each (they identify an instance, not a kind of ticket),
 * very long tokens (hashes, identifiers) are dropped.
 */
export function tokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(/[a-z][a-z0-9_']*|\d+(?:\.\d+)*/g)) {
    let t = m[0].replace(/'/g, '');
    if (/^\d/.test(t)) t = '#';
    if (t.length > 24) continue;
    out.push(t);
  }
  return out;
}

/** The subject line of a "subject\n\nbody" text (issue title, email subject); '' otherwise. */
export function subjectOf(text: string): string {
  const m = /^([^\n]{1,200})\n[ \t]*\n\s*\S/.exec(text);
  return m ? m[1]!.trim() : '';
}
