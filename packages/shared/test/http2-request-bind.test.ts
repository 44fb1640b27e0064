// withLeanAsyncBind (http2-request-bind.ts): AsyncResource#bind without the deprecated accessor,
// for one synchronous call, with the same behaviour as Node's.
import assert from 'node:assert/strict';
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { releaseClosedHttp2Streams, withLeanAsyncBind } from '@support-agent/shared';

const store = new AsyncLocalStorage<string>();

type Bound = (...args: unknown[]) => unknown[];

/** resource.bind(fn, thisArg): Node takes a `this` for the bound function (its types do not). */
function bindWith(resource: AsyncResource, fn: Bound, thisArg: unknown): Bound {
  const bind = AsyncResource.prototype.bind as (f: Bound, t: unknown) => Bound;
  return bind.call(resource, fn, thisArg);
}

/** What a bound function sees when called: the async context, `this` and its arguments. */
function seen(this: unknown, ...args: unknown[]): unknown[] {
  return [store.getStore(), this, ...args];
}

describe('withLeanAsyncBind', () => {
  it('when a function is bound inside it, then it runs in the resource’s context with its this and arguments, as Node’s bind does', () => {
    const resource = store.run('request context', () => new AsyncResource('probe'));
    const receiver = { name: 'receiver' };
    const lean = withLeanAsyncBind(() => ({
      free: resource.bind(seen),
      fixed: bindWith(resource, seen, receiver),
    }));
    const node = {
      free: resource.bind(seen),
      fixed: bindWith(resource, seen, receiver),
    };
    const caller = { name: 'caller' };
    for (const bound of [lean, node]) {
      assert.deepEqual(
        store.run('other', () => bound.free.call(caller, 1, 'two')),
        ['request context', caller, 1, 'two'],
      );
      assert.deepEqual(
        store.run('other', () => bound.fixed.call(caller, 3)),
        ['request context', receiver, 3],
      );
    }
    assert.equal('asyncResource' in lean.free, false);
    assert.equal('asyncResource' in node.free, true);
  });

  it('when the call returns or throws, then AsyncResource#bind is Node’s again', () => {
    const nodeBind = AsyncResource.prototype.bind;
    assert.equal(
      withLeanAsyncBind(() => AsyncResource.prototype.bind !== nodeBind),
      true,
    );
    assert.equal(AsyncResource.prototype.bind, nodeBind);
    assert.throws(
      () =>
        withLeanAsyncBind(() => {
          throw new Error('request failed');
        }),
      /request failed/,
    );
    assert.equal(AsyncResource.prototype.bind, nodeBind);
  });

  it('when an http2 request is made before its session connected, then its response arrives in the requester’s context', async () => {
    releaseClosedHttp2Streams(); // requests go through withLeanAsyncBind from here on
    const server = http2.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      assert.equal(session.connecting, true);
      const contexts = await store.run(
        'requester',
        () =>
          new Promise<(string | undefined)[]>((resolve, reject) => {
            const stream = session.request({ ':path': '/' });
            const at: (string | undefined)[] = [];
            stream.on('response', () => at.push(store.getStore()));
            stream.on('data', () => {});
            stream.on('end', () => resolve([...at, store.getStore()]));
            stream.on('error', reject);
            stream.end();
          }),
      );
      assert.deepEqual(contexts, ['requester', 'requester']);
    } finally {
      session.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
