// Traffic policies on the Kubernetes objects every overlay renders (`kubectl kustomize`, no
// cluster): each workload covered by a NetworkPolicy and a PodDisruptionBudget; exactly the
// intended traffic graph; Services that select one workload; only the gateway exposed;
// addresses and Prometheus discovery.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { IIngress, INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IConfigMap, IService } from 'kubernetes-models/v1';
import type { K8sObject } from '../../scripts/validate-deploy.js';
import {
  METRICS_PORT,
  SERVICES,
  SERVICE_NAMES,
  allowedTraffic,
  deploymentOf,
  envValue,
  expectedTraffic,
  isEmptySelector,
  matches,
  of,
  overlayView,
  type Workload,
} from './k8s-objects.js';
for (const overlayName of ['dev', 'prod']) {
  describe(`overlay ${overlayName}`, () => {
    let objects: K8sObject[] = [];
    let loads: Workload[] = [];
    let policies: INetworkPolicy[] = [];
    let configMaps: IConfigMap[] = [];
    const app = (name: string) => deploymentOf(loads, name);

    before(() => {
      ({ objects, loads, policies, configMaps } = overlayView(overlayName));
    });

    it('when a Deployment or StatefulSet runs, then a NetworkPolicy and a PodDisruptionBudget select its pods', () => {
      const pdbs = of<IPodDisruptionBudget>(objects, 'PodDisruptionBudget');
      for (const w of loads.filter((l) => l.longRunning)) {
        const own = policies.filter(
          (p) => !isEmptySelector(p.spec?.podSelector) && matches(p.spec?.podSelector, w.labels),
        );
        assert.ok(own.length > 0, `${w.name}: a NetworkPolicy of its own`);
        const pdb = pdbs.filter((p) => matches(p.spec?.selector, w.labels));
        assert.equal(pdb.length, 1, `${w.name}: exactly one PodDisruptionBudget`);
        // A budget must never block a node drain: at least one pod may always go.
        const spec = pdb[0]!.spec!;
        assert.ok(
          spec.maxUnavailable !== undefined && spec.maxUnavailable !== 0,
          `${w.name}: PDB with maxUnavailable ≥ 1`,
        );
      }
    });

    it('when traffic arrives, then everything is denied unless a policy allows it', () => {
      const deny = policies.find(
        (p) =>
          isEmptySelector(p.spec?.podSelector) &&
          (p.spec?.policyTypes ?? []).includes('Ingress') &&
          (p.spec?.ingress ?? []).length === 0,
      );
      assert.ok(deny, 'a default-deny ingress NetworkPolicy');
    });

    it('when the policies are evaluated, then each pod accepts exactly its intended clients on its ports', () => {
      const expected = expectedTraffic(overlayName);
      const seen = new Set(loads.map((w) => w.labels.app));
      assert.deepEqual(
        [...seen].sort(),
        Object.keys(expected).sort(),
        'one expectation per workload',
      );
      for (const w of loads) {
        const actual = Object.fromEntries(
          [...allowedTraffic(policies, w.labels)].map(([port, sources]) => [
            String(port),
            [...sources].sort(),
          ]),
        );
        const want = Object.fromEntries(
          Object.entries(expected[w.labels.app as string] ?? {}).map(([port, sources]) => [
            port,
            [...sources].sort(),
          ]),
        );
        assert.deepEqual(actual, want, `${w.kind}/${w.name}: allowed ingress`);
      }
    });

    it('when a Service routes traffic, then it selects one workload and its target ports exist', () => {
      for (const svc of of<IService>(objects, 'Service')) {
        const name = svc.metadata?.name;
        assert.ok(
          !['NodePort', 'LoadBalancer'].includes(svc.spec?.type ?? ''),
          `${name}: not exposed outside`,
        );
        const selected = loads.filter((w) =>
          matches({ matchLabels: svc.spec?.selector ?? {} }, w.labels),
        );
        assert.equal(selected.length, 1, `Service ${name} selects exactly one workload`);
        const containerPorts = selected[0]!.spec.containers.flatMap((c) => c.ports ?? []);
        for (const port of svc.spec?.ports ?? []) {
          const target = port.targetPort ?? port.port;
          assert.ok(
            containerPorts.some((p) => p.name === target || p.containerPort === target),
            `Service ${name} port ${port.name}: target ${target} is a container port`,
          );
        }
      }
    });

    it('when the cluster is entered from outside, then only the gateway Service is behind an Ingress', () => {
      const ingresses = of<IIngress>(objects, 'Ingress');
      assert.equal(ingresses.length, 1);
      const backends = ingresses.flatMap((i) => [
        ...(i.spec?.defaultBackend ? [i.spec.defaultBackend] : []),
        ...(i.spec?.rules ?? []).flatMap((r) => r.http?.paths.map((p) => p.backend) ?? []),
      ]);
      assert.ok(backends.length > 0);
      for (const b of backends) {
        assert.equal(b.service?.name, 'gateway');
        assert.equal(b.service?.port?.name, 'http', 'the public port, never admin');
      }
      if (overlayName === 'prod') {
        const spec = ingresses[0]!.spec!;
        assert.ok(
          spec.rules?.every((r) => r.host),
          'prod: a host on every rule',
        );
        assert.ok((spec.tls ?? []).length > 0, 'prod: TLS');
      }
    });

    it('when a service listens, then its address variable is 0.0.0.0:<port>, its Service is headless and clients use <service>:<port>', () => {
      for (const name of SERVICE_NAMES) {
        const { container } = app(name);
        const { port, addrVar } = SERVICES[name];
        assert.ok(
          container.ports?.some((p) => p.containerPort === port),
          `${name}: container port ${port}`,
        );
        assert.ok(
          container.ports?.some((p) => p.name === 'metrics' && p.containerPort === METRICS_PORT),
          `${name}: metrics port`,
        );
        if (addrVar) {
          assert.equal(
            container.env?.find((e) => e.name === addrVar)?.value,
            `0.0.0.0:${port}`,
            `${name} listens`,
          );
          const svc = of<IService>(objects, 'Service').find((s) => s.metadata?.name === name);
          assert.equal(svc?.spec?.ports?.[0]?.port, port, `${name} Service port`);
          // Every replica behind the name: callers spread calls over the pods (round_robin).
          assert.equal(svc?.spec?.clusterIP, 'None', `${name}: a headless Service`);
          for (const client of SERVICE_NAMES.filter((n) => n !== name)) {
            const value = envValue(app(client).container, addrVar, configMaps);
            assert.equal(value, `${name}:${port}`, `${client} reaches ${name} through ${addrVar}`);
          }
        }
      }
    });

    it('when Prometheus discovers pods, then every service is annotated for port 9464', () => {
      for (const name of SERVICE_NAMES) {
        const annotations = app(name).w.template.metadata?.annotations ?? {};
        assert.equal(annotations['prometheus.io/scrape'], 'true', name);
        assert.equal(annotations['prometheus.io/port'], String(METRICS_PORT), name);
        assert.equal(annotations['prometheus.io/path'], '/metrics', name);
      }
    });
  });
}
