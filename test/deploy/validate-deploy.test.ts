// The validator behind `npm run validate:deploy` rejects what it should: schema errors and
// unknown kinds in Kubernetes objects, unknown compose fields, unset variables; and reads .env
// and ${…} the way docker compose does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  interpolate,
  parseDotEnv,
  validateComposeSchema,
  validateK8sObject,
  type K8sObject,
} from '../../scripts/validate-deploy.js';

const deployment = (container: Record<string, unknown>): K8sObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'x' },
  spec: {
    selector: { matchLabels: { app: 'x' } },
    template: { metadata: { labels: { app: 'x' } }, spec: { containers: [container] } },
  },
});

describe('validateK8sObject', () => {
  it('when an object matches its schema, then there are no problems', async () => {
    assert.deepEqual(await validateK8sObject(deployment({ name: 'x', image: 'x:1' })), []);
  });

  it('when a field has the wrong type, then the problem names its path', async () => {
    const problems = await validateK8sObject(
      deployment({ name: 'x', image: 'x:1', ports: [{ containerPort: 'http' }] }),
    );
    assert.deepEqual(problems, [
      '/spec/template/spec/containers/0/ports/0/containerPort must be integer',
    ]);
  });

  it('when a required field is missing, then it is reported', async () => {
    const problems = await validateK8sObject(deployment({ image: 'x:1' }));
    assert.deepEqual(problems, [
      '/spec/template/spec/containers/0 must have required property name',
    ]);
  });

  it('when the kind or apiVersion is unknown, then it is an error, not a pass', async () => {
    for (const [apiVersion, kind] of [
      ['apps/v1', 'Deploymnt'],
      ['example.com/v1', 'Widget'],
      ['../../etc/v1', 'Deployment'],
    ]) {
      const problems = await validateK8sObject({
        apiVersion,
        kind,
        metadata: { name: 'x' },
      } as K8sObject);
      assert.match(problems[0] ?? '', /^unknown kind/, `${apiVersion}/${kind}`);
    }
  });

  it('when a removed or beta API version is used, then it is rejected although kubernetes-models knows it', async () => {
    for (const [apiVersion, kind] of [
      ['extensions/v1beta1', 'Ingress'],
      ['policy/v1beta1', 'PodDisruptionBudget'],
      ['autoscaling/v2beta2', 'HorizontalPodAutoscaler'],
    ]) {
      const problems = await validateK8sObject({
        apiVersion,
        kind,
        metadata: { name: 'x' },
      } as K8sObject);
      assert.match(problems[0] ?? '', /is not a GA API version/, `${apiVersion}/${kind}`);
    }
  });

  it('when kustomize wraps a Secret value over lines, then it is valid (the API server ignores the newlines); bad base64 is not', async () => {
    const secret = (value: string): K8sObject => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data: { KEY: value },
    });
    const wrapped = `${Buffer.from('x'.repeat(80)).toString('base64').slice(0, 70)}\n${Buffer.from('x'.repeat(80)).toString('base64').slice(70)}\n`;
    assert.deepEqual(await validateK8sObject(secret(wrapped)), []);
    assert.deepEqual(await validateK8sObject(secret('not base64!')), [
      '/data/KEY must match format "byte"',
    ]);
  });
});

describe('validateComposeSchema', () => {
  it('when a compose file uses only specified fields, then it is valid', () => {
    const model = {
      services: {
        a: {
          image: 'x:1',
          healthcheck: { test: ['CMD', 'true'], interval: '5s' },
          depends_on: { b: { condition: 'service_healthy' } },
          deploy: { resources: { limits: { memory: '128M' } } },
          expose: ['8080', '9000-9001/tcp'],
        },
        b: { image: 'y:1', healthcheck: { disable: true } },
      },
      volumes: { data: null },
      'x-anchor': { anything: true },
    };
    assert.deepEqual(validateComposeSchema(model), []);
  });

  it('when a field is misspelt or has the wrong shape, then it is rejected', () => {
    assert.match(
      validateComposeSchema({ services: { a: { image: 'x', healtcheck: {} } } })[0] ?? '',
      /additional properties.*healtcheck/,
    );
    assert.ok(
      validateComposeSchema({
        services: { a: { image: 'x', depends_on: { b: { condition: 'healthy' } } } },
      }).length > 0,
    );
    assert.ok(
      validateComposeSchema({ services: { a: { image: 'x', expose: ['http'] } } }).length > 0,
    );
  });
});

describe('.env and interpolation', () => {
  it('when .env is parsed, then comments, export, quotes and inline comments behave like compose', () => {
    const env = parseDotEnv(
      [
        '# comment',
        '',
        'A=plain value # inline comment',
        'export B=exported',
        'C="double \\"quoted\\" # not a comment"',
        "D='single $NOT_EXPANDED'",
        'E=',
        'F=a=b',
      ].join('\n'),
    );
    assert.deepEqual(env, {
      A: 'plain value',
      B: 'exported',
      C: 'double "quoted" # not a comment',
      D: 'single $NOT_EXPANDED',
      E: '',
      F: 'a=b',
    });
    assert.throws(() => parseDotEnv('not a pair'), /line 1: expected KEY=VALUE/);
  });

  it('when values are interpolated, then every compose form resolves as docker compose resolves it', () => {
    const env = { SET: 'v', EMPTY: '', PORT: '8080' };
    const cases: Array<[string, string]> = [
      ['${SET}', 'v'],
      ['$SET/x', 'v/x'],
      ['$$SET', '$SET'],
      ['${UNSET:-dflt}', 'dflt'],
      ['${EMPTY:-dflt}', 'dflt'],
      ['${EMPTY-dflt}', ''],
      ['${UNSET-${PORT}}', '8080'],
      ['${SET:+alt}', 'alt'],
      ['${EMPTY:+alt}', ''],
      ['${EMPTY+alt}', 'alt'],
      ['a:${SET:?}:b', 'a:v:b'],
      ['$', '$'],
    ];
    for (const [input, expected] of cases) {
      const problems: string[] = [];
      assert.equal(interpolate(input, env, 'here', problems), expected, input);
      assert.deepEqual(problems, [], input);
    }
  });

  it('when a variable is missing, then interpolation reports it', () => {
    const problems: string[] = [];
    interpolate(
      '${UNSET} ${EMPTY:?must be set} ${ALSO_UNSET?} ${unterminated',
      { EMPTY: '' },
      '/x',
      problems,
    );
    assert.deepEqual(problems, [
      '/x: ${UNSET} is not set in .env',
      '/x: EMPTY is required: must be set (set it in .env)',
      '/x: ALSO_UNSET is required (set it in .env)',
      '/x: unterminated ${ in "${UNSET} ${EMPTY:?must be set} ${ALSO_UNSET?} ${unterminated"',
    ]);
  });
});
