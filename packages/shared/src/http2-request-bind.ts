/**
 * Runs `request` (a `node:http2` client session's `request`) with `AsyncResource#bind` replaced,
 * for that synchronous call only, by an equivalent that leaves out the deprecated
 * `asyncResource` accessor (DEP0172).
 *
 * Why: on Node 20 every client request binds its connect callback to an `AsyncResource`, and
 * `bind` defines that accessor with two fresh `util.deprecate` wrappers and
 * `Object.defineProperties` each time. In the gateway's search profile that was 2.4 % of its
 * busy time (`deprecate` 1.5 %, `bind` 0.9 %) plus the garbage. Node itself only ever calls the
 * bound function, never reads the accessor, so nothing observes the difference: the callback
 * runs in the resource's async scope with the same `this` and arguments.
 * `bench/http2-request.ts` measures it: CPU per request of a `node:http2` client and server in
 * one process (docs/performance.md).
 */
import { AsyncResource } from 'node:async_hooks';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any callback, as Node's own signature
type Callback = (this: unknown, ...args: any[]) => unknown;
type Bind = (this: AsyncResource, fn: Callback, thisArg?: unknown) => unknown;

const nodeBind = AsyncResource.prototype.bind as Bind;

function bindWithoutAccessor(this: AsyncResource, fn: Callback, thisArg?: unknown): unknown {
  if (thisArg !== undefined) return this.runInAsyncScope.bind(this, fn, thisArg);
  return inScopeOf(this, fn);
}

/** `fn` called with the caller's `this` and arguments, in `resource`'s async scope. */
function inScopeOf(resource: AsyncResource, fn: Callback): Callback {
  return function (this: unknown, ...args: unknown[]) {
    return resource.runInAsyncScope(fn, this, ...args);
  };
}

/** `request()`, with every `AsyncResource#bind` it makes left without the accessor. */
export function withLeanAsyncBind<T>(request: () => T): T {
  const proto = AsyncResource.prototype as unknown as { bind: Bind };
  proto.bind = bindWithoutAccessor;
  try {
    return request();
  } finally {
    proto.bind = nodeBind;
  }
}
