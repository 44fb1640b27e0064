import { digest } from '@support-agent/proto';
import type { DigestUpstream } from '../../domain/ports.js';
import { GrpcUpstream } from './grpc-upstream.js';

/** Typed calls to the digest service; every call has a deadline and carries the request id. */
export class DigestClient
  extends GrpcUpstream<digest.DigestServiceClient>
  implements DigestUpstream
{
  /** @param bulkDeadlineMs deadline of BuildDigest (aggregation and prose generation) */
  constructor(
    address: string,
    deadlineMs: number,
    private readonly bulkDeadlineMs: number = deadlineMs,
  ) {
    super(address, deadlineMs, digest.DigestServiceClient);
  }

  getLatestDigest(
    request: digest.GetLatestDigestRequest,
    requestId?: string,
  ): Promise<digest.GetLatestDigestResponse> {
    return this.unary(this.client.getLatestDigest, request, requestId);
  }

  buildDigest(
    request: digest.BuildDigestRequest,
    requestId?: string,
  ): Promise<digest.BuildDigestResponse> {
    return this.unary(this.client.buildDigest, request, requestId, this.bulkDeadlineMs);
  }
}
