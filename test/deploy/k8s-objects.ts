// What the Kubernetes policy tests share (policies.test.ts, network.test.ts): the services and
// the intended traffic graph, the overlays rendered once per process, and readers of the
// rendered objects (workloads, selectors, NetworkPolicy rules, env values).
import assert from 'node:assert/strict';
import type { IDeployment, IStatefulSet } from 'kubernetes-models/apps/v1';
import type { IJob } from 'kubernetes-models/batch/v1';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import type { IConfigMap, IContainer, IPodSpec, IPodTemplateSpec } from 'kubernetes-models/v1';
import {
  describeObject,
  renderOverlays,
  type K8sObject,
  type RenderedOverlay,
} from '../../scripts/validate-deploy.js';

export type LabelSelector = NonNullable<INetworkPolicy['spec']>['podSelector'];

/** The five services: their port, and the variable that is both listen and client address. */
export const SERVICES = {
  gateway: { port: 8080, addrVar: undefined },
  tickets: { port: 50051, addrVar: 'TICKETS_ADDR' },
  knowledge: { port: 50052, addrVar: 'KNOWLEDGE_ADDR' },
  answers: { port: 50053, addrVar: 'ANSWERS_ADDR' },
  digest: { port: 50054, addrVar: 'DIGEST_ADDR' },
} as const;
export type ServiceName = keyof typeof SERVICES;
export const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];
export const METRICS_PORT = 9464;
export const PROMETHEUS = 'pods app.kubernetes.io/name=prometheus in any namespace';
export const INGRESS_NGINX = 'namespace kubernetes.io/metadata.name=ingress-nginx';

/**
 * Who may open connections to whom, per overlay: app → port → allowed sources. "anyone" is a
 * rule without `from`; `app:x` are pods of the same namespace.
 */
export function expectedTraffic(overlay: string): Record<string, Record<number, string[]>> {
  const metrics = { [METRICS_PORT]: [PROMETHEUS] };
  const graph: Record<string, Record<number, string[]>> = {
    gateway: {
      8080: overlay === 'prod' ? ['app:bootstrap', INGRESS_NGINX] : ['anyone'],
      8081: ['app:bootstrap'],
      ...metrics,
    },
    tickets: { 50051: ['app:answers', 'app:gateway'], ...metrics },
    knowledge: { 50052: ['app:answers', 'app:digest', 'app:gateway'], ...metrics },
    answers: { 50053: ['app:gateway'], ...metrics },
    digest: { 50054: ['app:gateway'], ...metrics },
    bootstrap: {},
  };
  if (overlay === 'dev') {
    Object.assign(graph, {
      mysql: { 3306: ['app:answers', 'app:digest', 'app:gateway', 'app:tickets'] },
      redis: { 6379: ['app:gateway', 'app:tickets'] },
      nats: { 4222: ['app:answers', 'app:digest', 'app:tickets'] },
      qdrant: { 6333: ['app:knowledge'] },
    });
  }
  return graph;
}

/** Required keys of the Secret support-agent-backends (components/external-backends documents them). */
export const REQUIRED_BACKEND_KEYS = [
  'ADMIN_TOKEN',
  'MYSQL_URL',
  'NATS_URL',
  'QDRANT_URL',
  'REDIS_URL',
];

// ---------------------------------------------------------------------------------------------
// Helpers

export interface Workload {
  obj: K8sObject;
  kind: 'Deployment' | 'StatefulSet' | 'Job';
  name: string;
  template: IPodTemplateSpec;
  spec: IPodSpec;
  labels: Record<string, string>;
  longRunning: boolean;
}

export const of = <T>(objects: K8sObject[], kind: string) =>
  objects.filter((o) => o.kind === kind) as unknown as (T & K8sObject)[];

export function workloads(objects: K8sObject[]): Workload[] {
  return objects.flatMap((obj): Workload[] => {
    if (obj.kind !== 'Deployment' && obj.kind !== 'StatefulSet' && obj.kind !== 'Job') return [];
    const template = (obj as unknown as IDeployment | IStatefulSet | IJob).spec?.template;
    assert.ok(template?.spec, `${describeObject(obj)} has a pod template`);
    return [
      {
        obj,
        kind: obj.kind,
        name: obj.metadata.name,
        template,
        spec: template.spec,
        labels: template.metadata?.labels ?? {},
        longRunning: obj.kind !== 'Job',
      },
    ];
  });
}

export function containersOf(spec: IPodSpec): IContainer[] {
  return [...(spec.initContainers ?? []), ...spec.containers];
}

export function matches(
  selector: LabelSelector | undefined,
  labels: Record<string, string>,
): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {}))
    if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const value = labels[e.key];
    const ok =
      e.operator === 'In'
        ? value !== undefined && (e.values ?? []).includes(value)
        : e.operator === 'NotIn'
          ? value === undefined || !(e.values ?? []).includes(value)
          : e.operator === 'Exists'
            ? value !== undefined
            : value === undefined;
    if (!ok) return false;
  }
  return true;
}

export const isEmptySelector = (s: LabelSelector | undefined) =>
  !!s && Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;

export function describePeer(
  peer: NonNullable<NonNullable<INetworkPolicy['spec']>['ingress']>[number]['from'] extends
    (infer P)[] | undefined
    ? P
    : never,
): string {
  const pods = peer.podSelector;
  const ns = peer.namespaceSelector;
  const labels = (s: LabelSelector) =>
    Object.entries(s.matchLabels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  if (pods && !ns) {
    const app = pods.matchLabels?.app;
    return app && Object.keys(pods.matchLabels ?? {}).length === 1
      ? `app:${app}`
      : `pods ${labels(pods)}`;
  }
  if (ns && !pods) return isEmptySelector(ns) ? 'any namespace' : `namespace ${labels(ns)}`;
  if (ns && pods) {
    return `pods ${labels(pods)} in ${isEmptySelector(ns) ? 'any namespace' : `namespace ${labels(ns)}`}`;
  }
  return `ipBlock ${JSON.stringify(peer.ipBlock)}`;
}

/** port → sources allowed to connect to pods with these labels (union of all policies). */
export function allowedTraffic(policies: INetworkPolicy[], labels: Record<string, string>) {
  const allowed = new Map<number | string, Set<string>>();
  for (const policy of policies) {
    const spec = policy.spec;
    if (!spec || !matches(spec.podSelector, labels)) continue;
    if (!(spec.policyTypes ?? ['Ingress']).includes('Ingress')) continue;
    for (const rule of spec.ingress ?? []) {
      const sources = rule.from?.map(describePeer) ?? ['anyone'];
      for (const port of rule.ports?.map((p) => p.port ?? 'all ports') ?? ['all ports']) {
        const set = allowed.get(port) ?? new Set<string>();
        sources.forEach((s) => set.add(s));
        allowed.set(port, set);
      }
    }
  }
  return allowed;
}

export function envValue(
  container: IContainer,
  name: string,
  configMaps: IConfigMap[],
): string | undefined {
  const direct = container.env?.find((e) => e.name === name);
  if (direct) return direct.value;
  for (const source of container.envFrom ?? []) {
    const cm = configMaps.find((c) => c.metadata?.name === source.configMapRef?.name);
    const value = cm?.data?.[name];
    if (value !== undefined) return value;
  }
  return undefined;
}

export function preStopSeconds(container: IContainer): number {
  const handler = container.lifecycle?.preStop;
  if (handler?.sleep) return handler.sleep.seconds;
  const cmd = handler?.exec?.command ?? [];
  return cmd[0] === 'sleep' || cmd[0] === '/bin/sleep' ? Number(cmd[1]) : 0;
}

export function imageTag(image: string): string | undefined {
  if (image.includes('@sha256:')) return 'digest';
  const lastSegment = image.split('/').pop() ?? '';
  return lastSegment.includes(':') ? lastSegment.split(':').pop() : undefined;
}

let rendered: RenderedOverlay[] | undefined;

/** Every overlay, rendered once per test process. */
export function renderedOverlays(): RenderedOverlay[] {
  rendered ??= renderOverlays();
  return rendered;
}

/** One overlay's objects as the policy tests read them. */
export interface OverlayView {
  objects: K8sObject[];
  loads: Workload[];
  policies: INetworkPolicy[];
  configMaps: IConfigMap[];
}

export function overlayView(overlayName: string): OverlayView {
  const overlay = renderedOverlays().find((o) => o.name === overlayName);
  assert.ok(overlay, `overlay ${overlayName} exists`);
  const objects = overlay.objects;
  return {
    objects,
    loads: workloads(objects),
    policies: of<INetworkPolicy>(objects, 'NetworkPolicy'),
    configMaps: of<IConfigMap>(objects, 'ConfigMap'),
  };
}

/** The Deployment of a service and its (only) container. */
export function deploymentOf(loads: Workload[], name: string) {
  const w = loads.find((l) => l.name === name && l.kind === 'Deployment');
  assert.ok(w, `Deployment ${name} rendered`);
  return { w, container: w.spec.containers[0] as IContainer };
}
