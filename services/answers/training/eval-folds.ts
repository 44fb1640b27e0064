// How an organization's own triage model does on tickets it was not trained on, measured by
// cross-validation within each organization of a labelled file (docs/triage.md).
//
//   npm run eval:triage-folds -- <file.jsonl> [--folds 5] [--seed 2] [--group repo]
//                              [--sizes 50,100,200] [--l2 0.003] [--dropout 2] [--pooled]
//
// Rows {title, body, label, <group>}: each value of --group (default `repo`) is one
// organization, its rows its labelled history. For each organization and outer fold, the
// organization's training run (trainOrgModel, exactly as the service runs it, its own inner
// cross-validation included) sees only the other folds, and the held-out fold is classified.
// Prints macro-F1 per organization and per class, and their mean (the cross-organization F1).
// --sizes draws that many training tickets (stratified, seeded) from each outer training
// split: the learning curve. --pooled treats the whole file as one organization.
// Measurement only: nothing here feeds back into the defaults.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { mulberry32 } from '@support-agent/shared';
import { classifyWithOrgModel, loadOrgModel } from '../src/domain/org-triage/org-model.js';
import {
  stratifiedFolds,
  trainOrgModel,
  type LabelledText,
  type TrainSettings,
} from '../src/domain/org-triage/train-org-model.js';
import { categoryScores } from '../src/domain/org-triage/scores.js';
import { loadTriageModel } from '../src/domain/triage-model.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    folds: { type: 'string', default: '5' },
    seed: { type: 'string', default: '2' },
    group: { type: 'string', default: 'repo' },
    sizes: { type: 'string' },
    l2: { type: 'string' },
    epochs: { type: 'string' },
    prior: { type: 'string' },
    nb: { type: 'string' },
    form: { type: 'string' },
    'family-l2': { type: 'string' },
    'inner-folds': { type: 'string' },
    'template-lines': { type: 'string' },
    dropout: { type: 'string' },
    pooled: { type: 'boolean', default: false },
  },
});
const file = positionals[0];
if (!file) {
  process.stderr.write(
    'usage: npm run eval:triage-folds -- <file.jsonl> [--folds 5] [--seed 2] [--group repo] [--sizes 50,100] [--pooled]\n',
  );
  process.exit(2);
}
const outerFolds = Number(values.folds);
const seed = Number(values.seed);
const settings: Partial<TrainSettings> = {
  ...(values.l2 ? { l2: Number(values.l2) } : {}),
  ...(values.epochs ? { epochs: Number(values.epochs) } : {}),
  ...(values.prior ? { prior: values.prior === '1' } : {}),
  ...(values.nb ? { nbPower: Number(values.nb) } : {}),
  ...(values.form ? { form: values.form === '1' } : {}),
  // e.g. t=0.5,h=2: the l2 multiplier of each feature family (the name's first letter)
  ...(values['family-l2']
    ? {
        familyL2: Object.fromEntries(
          values['family-l2'].split(',').map((p) => [p.split('=')[0]!, Number(p.split('=')[1])]),
        ),
      }
    : {}),
  ...(values['template-lines'] ? { templateLines: Number(values['template-lines']) } : {}),
  ...(values.dropout ? { dropoutCopies: Number(values.dropout) } : {}),
  ...(values['inner-folds'] ? { folds: Number(values['inner-folds']) } : {}),
};

interface Row extends LabelledText {
  group: string;
}
const rows: Row[] = readFileSync(file, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => {
    const r = JSON.parse(l) as Record<string, unknown>;
    return {
      text:
        typeof r.text === 'string' ? r.text : `${String(r.title ?? '')}\n\n${String(r.body ?? '')}`,
      label: String(r.label),
      group: values.pooled ? 'all' : String(r[values.group!] ?? 'all'),
    };
  });
const builtin = loadTriageModel();
const groups = [...new Set(rows.map((r) => r.group))].sort();
const sizes = values.sizes ? values.sizes.split(',').map(Number) : [Infinity];

/** A stratified draw of `n` of `rows` (all of them when n is larger). */
function draw(list: Row[], n: number, random: () => number): Row[] {
  if (n >= list.length) return list;
  const shuffled = list.map((r) => [r, random()] as const).sort((a, b) => a[1] - b[1]);
  const labels = [...new Set(list.map((r) => r.label))].sort();
  const byLabel = labels.map((l) => shuffled.filter(([r]) => r.label === l).map(([r]) => r));
  const out: Row[] = [];
  for (let i = 0; out.length < n; i++)
    for (const list of byLabel) if (i < list.length && out.length < n) out.push(list[i]!);
  return out;
}

const f = (x: number) => x.toFixed(3);
console.log(
  `${rows.length} rows, ${groups.length} organization(s), ${outerFolds} outer folds (seed ${seed}); settings ${JSON.stringify(settings)}`,
);
for (const size of sizes) {
  const perGroup: { group: string; macroF1: number; perClass: Map<string, number> }[] = [];
  let cpuMs = 0;
  let trainings = 0;
  for (const group of groups) {
    const own = rows.filter((r) => r.group === group);
    const categories = [...new Set(own.map((r) => r.label))].sort();
    const fold = stratifiedFolds(
      own.map((r) => categories.indexOf(r.label)),
      outerFolds,
      seed,
    );
    const gold: number[] = [];
    const predicted: number[] = [];
    const random = mulberry32(seed + 1);
    for (let k = 0; k < outerFolds; k++) {
      const train = draw(
        own.filter((_, i) => fold[i] !== k),
        size,
        random,
      );
      const test = own.filter((_, i) => fold[i] === k);
      const before = process.cpuUsage();
      const { model } = trainOrgModel(train, categories, builtin, settings);
      const used = process.cpuUsage(before);
      cpuMs += (used.user + used.system) / 1000;
      trainings++;
      const loaded = loadOrgModel(model, builtin);
      for (const r of test) {
        gold.push(categories.indexOf(r.label));
        predicted.push(categories.indexOf(classifyWithOrgModel(loaded, r.text).category));
      }
    }
    const s = categoryScores(categories, gold, predicted);
    perGroup.push({
      group,
      macroF1: s.macroF1,
      perClass: new Map(s.categories.map((c) => [c.category, c.f1])),
    });
    console.log(
      `  ${group}: macro-F1 ${f(s.macroF1)} (${s.categories.map((c) => `${c.category} ${f(c.f1)}`).join(', ')})`,
    );
  }
  const mean = perGroup.reduce((s, g) => s + g.macroF1, 0) / perGroup.length;
  const classes = [...new Set(perGroup.flatMap((g) => [...g.perClass.keys()]))].sort();
  const perClass = classes.map((c) => {
    const fs = perGroup.flatMap((g) => (g.perClass.has(c) ? [g.perClass.get(c)!] : []));
    return `${c} ${f(fs.reduce((a, b) => a + b, 0) / fs.length)}`;
  });
  console.log(
    `training tickets per organization ${Number.isFinite(size) ? size : 'all'}: mean macro-F1 ${f(mean)}; per class (mean over organizations) ${perClass.join(', ')}; CPU per training run ${(cpuMs / trainings / 1000).toFixed(1)} s`,
  );
}
