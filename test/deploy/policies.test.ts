// Policies on the Kubernetes objects every overlay renders (`kubectl kustomize`, no cluster):
// hardened, probed and bounded containers; graceful shutdown budgets that add up; references
// (Secrets, ConfigMaps, images) that resolve; replicas and HPAs. The traffic side (NetworkPolicy,
// PodDisruptionBudget, Services, Ingress) is network.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { IDeployment } from 'kubernetes-models/apps/v1';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { IJob } from 'kubernetes-models/batch/v1';
import type {
  IConfigMap,
  INamespace,
  ISecret,
  IService,
  IServiceAccount,
} from 'kubernetes-models/v1';
import {
  ROOT,
  describeObject,
  parseDotEnv,
  renderKustomization,
  type K8sObject,
  type RenderedOverlay,
} from '../../scripts/validate-deploy.js';
import {
  REQUIRED_BACKEND_KEYS,
  SERVICES,
  SERVICE_NAMES,
  containersOf,
  deploymentOf,
  envValue,
  imageTag,
  matches,
  of,
  overlayView,
  preStopSeconds,
  renderedOverlays,
  workloads,
  type Workload,
} from './k8s-objects.js';
let overlays: RenderedOverlay[] = [];

before(() => {
  overlays = renderedOverlays();
});

describe('rendered overlays', () => {
  it('when the overlays are listed, then dev and prod both render', () => {
    assert.deepEqual(
      overlays.map((o) => o.name),
      ['dev', 'prod'],
    );
    for (const o of overlays) assert.ok(o.objects.length > 0, `${o.dir} renders objects`);
  });

  it('when base is rendered alone, then its images are pinned too (overlays only retag them)', () => {
    for (const w of workloads(renderKustomization(path.join(ROOT, 'deploy/k8s/base')))) {
      for (const c of containersOf(w.spec)) {
        const tag = imageTag(c.image ?? '');
        assert.ok(tag && tag !== 'latest', `base ${w.name}/${c.name}: image ${c.image} pinned`);
      }
    }
  });
});

for (const overlayName of ['dev', 'prod']) {
  describe(`overlay ${overlayName}`, () => {
    let objects: K8sObject[] = [];
    let loads: Workload[] = [];
    let configMaps: IConfigMap[] = [];
    const app = (name: string) => deploymentOf(loads, name);

    before(() => {
      ({ objects, loads, configMaps } = overlayView(overlayName));
    });

    it('when objects are rendered, then only reviewed kinds appear (a new kind needs new policies here)', () => {
      const known = new Set([
        'Namespace',
        'ServiceAccount',
        'ConfigMap',
        'Secret',
        'Service',
        'Deployment',
        'StatefulSet',
        'Job',
        'PodDisruptionBudget',
        'HorizontalPodAutoscaler',
        'Ingress',
        'NetworkPolicy',
      ]);
      for (const o of objects) assert.ok(known.has(o.kind), `unexpected ${describeObject(o)}`);
    });

    it('when the namespace is created, then it enforces the restricted Pod Security Standard and holds everything', () => {
      const namespaces = of<INamespace>(objects, 'Namespace');
      assert.equal(namespaces.length, 1);
      const ns = namespaces[0]!;
      assert.equal(ns.metadata?.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
      for (const o of objects) {
        if (o.kind !== 'Namespace')
          assert.equal(o.metadata.namespace, ns.metadata?.name, describeObject(o));
      }
    });

    it('when the five services are deployed, then each is a Deployment with a Service and a ServiceAccount', () => {
      for (const name of SERVICE_NAMES) {
        app(name);
        assert.ok(
          of<IService>(objects, 'Service').some((s) => s.metadata?.name === name),
          `Service ${name}`,
        );
        assert.ok(
          of<IServiceAccount>(objects, 'ServiceAccount').some((s) => s.metadata?.name === name),
          `ServiceAccount ${name}`,
        );
      }
    });

    it('when a container runs, then it is non-root, read-only, without capabilities or privilege escalation', () => {
      for (const w of loads) {
        const pod = w.spec.securityContext ?? {};
        assert.ok(
          !w.spec.hostNetwork && !w.spec.hostPID && !w.spec.hostIPC,
          `${w.name}: no host namespaces`,
        );
        for (const c of containersOf(w.spec)) {
          const where = `${w.kind}/${w.name} container ${c.name}`;
          const sc = c.securityContext ?? {};
          assert.equal(sc.runAsNonRoot ?? pod.runAsNonRoot, true, `${where}: runAsNonRoot`);
          const uid = sc.runAsUser ?? pod.runAsUser;
          assert.ok(typeof uid === 'number' && uid > 0, `${where}: a numeric non-root runAsUser`);
          assert.equal(sc.readOnlyRootFilesystem, true, `${where}: readOnlyRootFilesystem`);
          assert.equal(
            sc.allowPrivilegeEscalation,
            false,
            `${where}: allowPrivilegeEscalation false`,
          );
          assert.notEqual(sc.privileged, true, `${where}: not privileged`);
          assert.ok(sc.capabilities?.drop?.includes('ALL'), `${where}: drops ALL capabilities`);
          assert.deepEqual(sc.capabilities?.add ?? [], [], `${where}: adds no capability`);
          const seccomp = (sc.seccompProfile ?? pod.seccompProfile)?.type;
          assert.ok(
            seccomp === 'RuntimeDefault' || seccomp === 'Localhost',
            `${where}: seccomp profile`,
          );
          assert.ok(!(c.ports ?? []).some((p) => p.hostPort), `${where}: no hostPort`);
        }
        for (const v of w.spec.volumes ?? []) {
          assert.ok(
            v.emptyDir || v.configMap || v.secret || v.persistentVolumeClaim || v.projected,
            `${w.name}: volume ${v.name} is of an allowed type`,
          );
        }
      }
    });

    it('when a container runs, then it has CPU and memory requests and limits', () => {
      for (const w of loads) {
        for (const c of containersOf(w.spec)) {
          const r = c.resources ?? {};
          for (const kind of ['requests', 'limits'] as const) {
            for (const res of ['cpu', 'memory']) {
              assert.ok(r[kind]?.[res] !== undefined, `${w.name}/${c.name}: ${kind}.${res}`);
            }
          }
        }
      }
    });

    it('when a long-running container runs, then it has readiness and liveness probes', () => {
      for (const w of loads.filter((l) => l.longRunning)) {
        for (const c of w.spec.containers) {
          assert.ok(c.readinessProbe, `${w.name}/${c.name}: readinessProbe`);
          assert.ok(c.livenessProbe, `${w.name}/${c.name}: livenessProbe`);
        }
      }
    });

    it('when a gRPC service is probed, then the kubelet asks the standard health service on its port; the gateway over HTTP', () => {
      for (const name of SERVICE_NAMES) {
        const { container } = app(name);
        const probes = [container.startupProbe, container.readinessProbe, container.livenessProbe];
        assert.ok(probes.every(Boolean), `${name}: startup, readiness and liveness probes`);
        if (name === 'gateway') {
          assert.equal(container.readinessProbe?.httpGet?.path, '/readyz');
          assert.equal(container.livenessProbe?.httpGet?.path, '/healthz');
        } else {
          for (const p of probes)
            assert.equal(p?.grpc?.port, SERVICES[name].port, `${name}: grpc probe port`);
        }
      }
    });

    it('when a pod runs, then it gets no API token, no service links and its own ServiceAccount', () => {
      const accounts = of<IServiceAccount>(objects, 'ServiceAccount');
      for (const w of loads) {
        assert.equal(
          w.spec.automountServiceAccountToken,
          false,
          `${w.name}: automountServiceAccountToken`,
        );
        assert.equal(w.spec.enableServiceLinks, false, `${w.name}: enableServiceLinks`);
        const sa = accounts.find((a) => a.metadata?.name === w.spec.serviceAccountName);
        assert.ok(sa, `${w.name}: ServiceAccount ${w.spec.serviceAccountName} rendered`);
        assert.equal(
          sa.automountServiceAccountToken,
          false,
          `${w.name}: its ServiceAccount mounts no token`,
        );
      }
    });

    it('when an image is referenced, then it carries a pinned tag, never latest', () => {
      for (const w of loads) {
        for (const c of containersOf(w.spec)) {
          const tag = imageTag(c.image ?? '');
          assert.ok(tag && tag !== 'latest', `${w.name}/${c.name}: image ${c.image} pinned`);
        }
      }
    });

    it('when our images are referenced, then every service uses the same release tag', () => {
      const images = SERVICE_NAMES.map((n) => app(n).container.image ?? '');
      assert.equal(new Set(images.map(imageTag)).size, 1, images.join(', '));
      for (const [i, name] of SERVICE_NAMES.entries()) {
        assert.match(images[i]!, new RegExp(`(^|/)support-agent/${name}:`), `${name} image name`);
      }
      if (overlayName === 'dev') {
        // kind/minikube load the images docker compose builds.
        const env = parseDotEnv(readFileSync(path.join(ROOT, '.env'), 'utf8'));
        assert.equal(
          imageTag(images[0]!),
          env.SUPPORT_AGENT_VERSION,
          'dev tag = .env SUPPORT_AGENT_VERSION',
        );
      }
    });

    it('when replicas spread, then every service asks for zone and node spreading of its own pods', () => {
      for (const name of SERVICE_NAMES) {
        const { w } = app(name);
        const keys = (w.spec.topologySpreadConstraints ?? []).map((t) => {
          assert.ok(
            matches(t.labelSelector, w.labels),
            `${name}: spread selector matches its pods`,
          );
          return t.topologyKey;
        });
        assert.deepEqual(
          keys.sort(),
          ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'],
          name,
        );
      }
    });

    it('when a pod is stopped, then readiness fails before the drain and the grace period covers both', () => {
      for (const name of SERVICE_NAMES) {
        const { w, container } = app(name);
        const preStop = preStopSeconds(container);
        const delay = Number(envValue(container, 'SHUTDOWN_DELAY_MS', configMaps) ?? 0) / 1000;
        const grace = Number(envValue(container, 'SHUTDOWN_GRACE_MS', configMaps) ?? 10_000) / 1000;
        assert.ok(
          preStop + delay >= 3,
          `${name}: ≥ 3 s for endpoints to drop the pod before it stops listening`,
        );
        const period = w.spec.terminationGracePeriodSeconds ?? 30;
        assert.ok(
          period >= preStop + delay + grace + 5,
          `${name}: terminationGracePeriodSeconds ${period} ≥ ${preStop} + ${delay} + ${grace} + 5`,
        );
      }
    });

    it('when a pod reads configuration, then every ConfigMap and Secret reference resolves', () => {
      const secrets = of<ISecret>(objects, 'Secret');
      const referenced = new Map<string, Set<string>>();
      for (const w of loads) {
        for (const c of containersOf(w.spec)) {
          for (const from of c.envFrom ?? []) {
            if (from.configMapRef) {
              assert.ok(
                configMaps.some((m) => m.metadata?.name === from.configMapRef?.name),
                `${w.name}: ConfigMap`,
              );
            }
            if (from.secretRef)
              referenced.set(
                from.secretRef.name!,
                referenced.get(from.secretRef.name!) ?? new Set(),
              );
          }
          for (const e of c.env ?? []) {
            const ref = e.valueFrom?.secretKeyRef;
            if (!ref || ref.optional) continue;
            const keys = referenced.get(ref.name!) ?? new Set<string>();
            keys.add(ref.key);
            referenced.set(ref.name!, keys);
          }
        }
      }
      if (overlayName === 'prod') {
        // External backends: the operator creates the one Secret; the repository ships none.
        assert.deepEqual(secrets, [], 'prod renders no Secret');
        assert.deepEqual([...referenced.keys()], ['support-agent-backends']);
        assert.deepEqual(
          [...referenced.get('support-agent-backends')!].sort(),
          REQUIRED_BACKEND_KEYS,
        );
      } else {
        for (const [name, keys] of referenced) {
          const secret = secrets.find((s) => s.metadata?.name === name);
          assert.ok(secret, `Secret ${name} rendered`);
          for (const key of keys)
            assert.ok(secret.data?.[key] !== undefined, `Secret ${name} has ${key}`);
        }
      }
    });

    it('when the bootstrap Job runs, then it uses the gateway image and reaches the admin and public APIs', () => {
      const job = loads.find((w) => w.kind === 'Job' && w.name === 'bootstrap');
      assert.ok(job, 'Job bootstrap');
      const jobSpec = (job.obj as unknown as IJob).spec!;
      assert.ok(
        jobSpec.ttlSecondsAfterFinished !== undefined && jobSpec.backoffLimit !== undefined,
      );
      const c = job.spec.containers[0]!;
      assert.equal(c.image, app('gateway').container.image);
      assert.deepEqual(c.command, ['node', '/app/deploy/bootstrap.mjs']);
      const services = of<IService>(objects, 'Service');
      const admin = new URL(envValue(c, 'ADMIN_URL', configMaps) ?? '');
      const adminSvc = services.find((s) => s.metadata?.name === admin.hostname);
      assert.ok(
        adminSvc?.spec?.ports?.some(
          (p) => p.port === Number(admin.port) && p.targetPort === 'admin',
        ),
        `ADMIN_URL ${admin} reaches the gateway's admin port`,
      );
      const pub = new URL(envValue(c, 'GATEWAY_URL', configMaps) ?? '');
      const pubSvc = services.find((s) => s.metadata?.name === pub.hostname);
      assert.ok(
        pubSvc?.spec?.ports?.some(
          (p) => p.port === Number(pub.port || 80) && p.targetPort === 'http',
        ),
        `GATEWAY_URL ${pub} reaches the gateway's public port`,
      );
    });

    it('when autoscaling applies, then the HPA owns the replica count; otherwise the replica count fits the overlay', () => {
      const hpas = of<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler');
      const scaled = hpas.map((h) => h.spec?.scaleTargetRef.name).sort();
      if (overlayName === 'prod') {
        assert.deepEqual(scaled, ['answers', 'gateway']);
        for (const h of hpas) {
          assert.equal(h.spec?.scaleTargetRef.kind, 'Deployment');
          assert.ok((h.spec?.minReplicas ?? 1) >= 2, `${h.metadata?.name}: minReplicas ≥ 2`);
        }
      } else {
        assert.deepEqual(scaled, []);
      }
      for (const name of SERVICE_NAMES) {
        const replicas = (app(name).w.obj as unknown as IDeployment).spec?.replicas;
        if (scaled.includes(name))
          assert.equal(replicas, undefined, `${name}: no replicas beside its HPA`);
        else if (overlayName === 'prod')
          assert.ok((replicas ?? 1) >= 2, `${name}: ≥ 2 replicas in prod`);
        else assert.equal(replicas, 1, `${name}: 1 replica in dev`);
      }
    });

    if (overlayName === 'dev') {
      it('when the dev backends run, then the Secret URLs point at their Services and the MySQL credentials agree', () => {
        const services = of<IService>(objects, 'Service');
        const secrets = of<ISecret>(objects, 'Secret');
        const decode = (s: ISecret | undefined, key: string) =>
          Buffer.from((s?.data?.[key] ?? '').replace(/\s/g, ''), 'base64').toString('utf8');
        const backends = secrets.find((s) =>
          s.metadata?.name?.startsWith('support-agent-backends'),
        );
        for (const key of ['MYSQL_URL', 'REDIS_URL', 'NATS_URL', 'QDRANT_URL']) {
          const url = new URL(decode(backends, key));
          const svc = services.find((s) => s.metadata?.name === url.hostname);
          assert.ok(
            svc?.spec?.ports?.some((p) => p.port === Number(url.port)),
            `${key} ${url.host} is a rendered Service port`,
          );
        }
        const mysql = new URL(decode(backends, 'MYSQL_URL'));
        const creds = secrets.find((s) => s.metadata?.name?.startsWith('mysql-credentials'));
        assert.equal(decode(creds, 'MYSQL_USER'), mysql.username);
        assert.equal(decode(creds, 'MYSQL_PASSWORD'), decodeURIComponent(mysql.password));
        assert.equal(decode(creds, 'MYSQL_DATABASE'), mysql.pathname.slice(1));
      });
    }
  });
}
