import { callUnary, createGrpcClient } from '@support-agent/shared';
import { digest } from '@support-agent/proto';

/** Typed calls to the digest service; every call has a deadline and carries the request id. */
export class DigestClient {
  private readonly client: digest.DigestServiceClient;

  constructor(
    readonly address: string,
    private readonly deadlineMs: number,
  ) {
    this.client = createGrpcClient(digest.DigestServiceClient, address);
  }

  getLatestDigest(
    request: digest.GetLatestDigestRequest,
    requestId?: string,
  ): Promise<digest.GetLatestDigestResponse> {
    return callUnary(this.client.getLatestDigest.bind(this.client), request, {
      timeoutMs: this.deadlineMs,
      ...(requestId ? { requestId } : {}),
    });
  }

  close(): void {
    this.client.close();
  }
}
