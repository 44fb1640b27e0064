import type { ChannelCredentials, ChannelOptions } from '@grpc/grpc-js';
import { callUnary, createGrpcClient } from '@support-agent/shared';

/** A generated unary method in its (request, metadata, options, callback) form. */
export type UnaryMethod<Req, Res> = Parameters<typeof callUnary<Req, Res>>[0];

type ClientConstructor<C> = new (
  address: string,
  credentials: ChannelCredentials,
  options?: ChannelOptions,
) => C;

/**
 * What every upstream wrapper shares: one channel, a deadline on every call, the request id
 * sent as metadata, and gRPC failures turned into AppErrors (by callUnary).
 */
export abstract class GrpcUpstream<C extends { close(): void }> {
  protected readonly client: C;

  constructor(
    readonly address: string,
    protected readonly deadlineMs: number,
    ClientCtor: ClientConstructor<C>,
  ) {
    this.client = createGrpcClient(ClientCtor, address);
  }

  /** One unary call; `timeoutMs` overrides the default deadline for slow operations. */
  protected unary<Req, Res>(
    method: UnaryMethod<Req, Res>,
    request: Req,
    requestId: string | undefined,
    timeoutMs: number = this.deadlineMs,
  ): Promise<Res> {
    return callUnary(method.bind(this.client), request, {
      timeoutMs,
      ...(requestId ? { requestId } : {}),
    });
  }

  close(): void {
    this.client.close();
  }
}
