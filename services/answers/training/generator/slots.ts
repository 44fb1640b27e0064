// The slot values one generated ticket is written with: one product vocabulary (a
// Domain) plus versions, systems and numbers. Every template slot is defined here.
import { identifier, os, version } from './artifacts.js';
import { Templates, type Domain } from './fragments.js';
import { capitalize, fill, type Rand, type Slots } from './rng.js';

const DEFECTS = new Templates('defects.txt');
/** Subjects of a plain statement of wrong behaviour, besides the product's components. */
const SUBJECTS = [
  'the export',
  'the app',
  'the page',
  'the list',
  'the report',
  'the button',
  'the search',
  'the sync',
  'the preview',
  'it',
  'the dialog',
  'the counter',
  'the form',
  'the upload',
  'the import',
  'the menu',
  'the chart',
  'the filter',
  'the output',
  'the installer',
  'the command',
  'the function',
  'the status bar',
  'the sidebar',
  'the table',
];

/** Verbs whose final consonant doubles before -ing. */
const DOUBLING = new Set([
  'run',
  'set',
  'get',
  'stop',
  'drop',
  'plug',
  'log',
  'ship',
  'commit',
  'put',
  'begin',
  'swap',
  'map',
  'pin',
  'tap',
  'skip',
  'wrap',
  'scan',
  'plan',
  'cut',
  'shut',
  'sit',
  'let',
]);

/** "open a file" → "opening a file". */
export function gerund(phrase: string): string {
  const [verb = '', ...rest] = phrase.split(' ');
  let ing: string;
  if (DOUBLING.has(verb)) ing = `${verb}${verb.slice(-1)}ing`;
  else if (/ie$/.test(verb)) ing = `${verb.slice(0, -2)}ying`;
  else if (/[^aeiou]e$/.test(verb) && verb !== 'be') ing = `${verb.slice(0, -1)}ing`;
  else ing = `${verb}ing`;
  return [ing, ...rest].join(' ');
}

const SYMPTOM_SHORT = [
  'crashes',
  'freezes',
  'returns wrong results',
  'stops responding',
  'shows a blank screen',
  'throws an exception',
  'leaks memory',
  'does nothing',
  'is very slow',
  'fails silently',
  'hangs forever',
  'produces corrupted output',
  'ignores the setting',
  'uses 100 % CPU',
  'is broken',
  'fails',
  'gives an error',
  'does not load',
  'loses data',
  'behaves incorrectly',
];
const PLATFORMS = [
  'Python 3.12',
  'ARM64',
  'Windows on ARM',
  'Node 20',
  'Apple Silicon',
  'Kubernetes',
  'Safari',
  'Android 14',
  'iOS 17',
  'Wayland',
  'Alpine Linux',
  'FreeBSD',
  'CUDA 12',
  'ROCm',
  'Docker',
  'WebAssembly',
  'Java 21',
  '.NET 8',
  'Raspberry Pi',
  'a read-only file system',
  'IPv6-only networks',
  'older browsers',
];

/** "a dark mode" → "dark mode": for "Support {feature_bare}". */
export const bare = (s: string) => s.replace(/^(a|an|the|some|more)\s+/i, '');

/** All slots for one ticket: fixed picks where a ticket must stay consistent, lists elsewhere. */
export function slotsFor(r: Rand, domain: Domain): Slots {
  const w = domain.words;
  const current = version(r);
  const previous = version(r);
  const component = r.pick(w.component!);
  const concepts = r.sample(w.concept!, 2);
  const slots: Slots = {
    product: w.product!,
    component: [component, component, r.pick(w.component!)],
    action: w.action!,
    action_ing: (q) => gerund(q.pick(w.action!)),
    action_cap: (q) => capitalize(q.pick(w.action!)),
    symptom: w.symptom!,
    symptom_short: SYMPTOM_SHORT,
    symptom_clause: (q) =>
      q.pick([
        q.pick(SYMPTOM_SHORT),
        `fails with \`${q.pick(w.error!)}\``,
        `and ${q.pick(w.symptom!)}`,
      ]),
    error: w.error!,
    error_inline: (q) => `\`${q.pick(w.error!)}\``,
    setting: w.setting!,
    feature: w.feature!,
    feature_bare: (q) => bare(q.pick(w.feature!)),
    goal: w.goal!,
    goal_ing: (q) => gerund(q.pick(w.goal!)),
    goal_cap: (q) => capitalize(q.pick(w.goal!)),
    concept: [concepts[0]!],
    concept2: [concepts[1] ?? concepts[0]!],
    doc_page: w.doc_page!,
    api: w.api!,
    install: w.install!,
    install_ing: (q) => gerund(q.pick(w.install!)),
    install_cap: (q) => capitalize(q.pick(w.install!)),
    platform: PLATFORMS,
    version: [current],
    prev_version: [previous],
    os: (q) => os(q),
    file: (q) =>
      `${q.pick(['src', 'lib', 'core', 'modules', 'internal', 'pkg'])}/${q.pick(['util', 'io', 'net', 'render', 'wallet', 'parser', 'cache', 'ops', 'ui', 'model'])}/${identifier(q)}.${q.pick(['cpp', 'py', 'ts', 'go', 'java', 'cs', 'h', 'js'])}`,
    test: (q) =>
      q.pick([
        `test_${identifier(q)}`,
        `${identifier(q)}.test`,
        `${identifier(q)}Test`,
        `${identifier(q)}_test.py`,
      ]),
    hash: (q) => Array.from({ length: 7 }, () => '0123456789abcdef'[q.int(0, 15)]).join(''),
    n: (q) => String(q.pick([q.int(2, 20), q.int(20, 500), q.int(500, 10_000)])),
    thing: DEFECTS.get('thing'),
    subject: (q) => (q.chance(0.5) ? component : q.pick(SUBJECTS)),
    subject_cap: (q) => capitalize(q.chance(0.5) ? component : q.pick(SUBJECTS)),
  };
  // A defect is itself a template over the other slots.
  slots.defect = (q) => fill(q, q.pick(DEFECTS.get('defect')), slots);
  return slots;
}
