// .github/workflows/ci.yml: the jobs the deployment relies on exist and run what they should;
// every action is pinned to a commit and every image to a version.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { ROOT } from '../../scripts/validate-deploy.js';

const workflow = parse(readFileSync(path.join(ROOT, '.github/workflows/ci.yml'), 'utf8')) as any;
const steps = (job: string): any[] => workflow.jobs[job]?.steps ?? [];
const script = (job: string) =>
  steps(job)
    .map((s) => `${s.run ?? ''}`)
    .join('\n');

describe('.github/workflows/ci.yml', () => {
  it('when an action is used, then it is pinned to a full commit SHA', () => {
    for (const [name, job] of Object.entries<any>(workflow.jobs)) {
      for (const step of job.steps ?? []) {
        if (step.uses)
          assert.match(step.uses, /^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/, `${name}: ${step.uses}`);
      }
    }
  });

  it('when an image or tool is used, then its version is pinned', () => {
    const text = readFileSync(path.join(ROOT, '.github/workflows/ci.yml'), 'utf8');
    assert.doesNotMatch(text, /:latest\b/);
    assert.match(workflow.env.KUBECTL_VERSION, /^v\d+\.\d+\.\d+$/);
    assert.match(workflow.env.KIND_VERSION, /^v\d+\.\d+\.\d+$/);
    assert.match(workflow.env.K6_IMAGE, /^grafana\/k6:\d+\.\d+\.\d+$/);
    assert.match(workflow.jobs.checks.container, /^node:20\.\d+\.\d+-bookworm$/);
  });

  it('when CI runs, then .ci/run, the manifest validation, the compose smoke and the kind deploy all run', () => {
    assert.match(script('checks'), /^bash \.ci\/run$/m);
    assert.match(script('manifests'), /kubectl kustomize/);
    assert.match(script('manifests'), /npm run validate:deploy/);
    assert.match(script('manifests'), /node --import tsx --test test\/deploy\/\*\.test\.ts/);
    const compose = script('compose');
    assert.match(compose, /docker compose build/);
    assert.match(compose, /docker compose up -d --wait/);
    assert.match(compose, /docker compose run --rm -T init/);
    assert.match(compose, /run \/scripts\/smoke\.js/);
    assert.match(compose, /docker compose down -v/);
    assert.equal(steps('compose').at(-1)?.if, 'always()', 'the stack is always torn down');
    assert.match(script('kind'), /kubectl apply -k deploy\/k8s\/overlays\/dev/);
    assert.match(script('kind'), /wait --for=condition=complete job\/bootstrap/);
  });
});
