import { answers } from '@support-agent/proto';
import type { AnswersUpstream } from '../../domain/ports.js';
import { GrpcUpstream } from './grpc-upstream.js';

/** Typed calls to the answers service; every call has a deadline and carries the request id. */
export class AnswersClient
  extends GrpcUpstream<answers.AnswersServiceClient>
  implements AnswersUpstream
{
  constructor(address: string, deadlineMs: number) {
    super(address, deadlineMs, answers.AnswersServiceClient);
  }

  generateAnswer(
    request: answers.GenerateAnswerRequest,
    requestId?: string,
  ): Promise<answers.GenerateAnswerResponse> {
    return this.unary(this.client.generateAnswer, request, requestId);
  }

  getUsage(
    request: answers.GetUsageRequest,
    requestId?: string,
  ): Promise<answers.GetUsageResponse> {
    return this.unary(this.client.getUsage, request, requestId);
  }

  setOrgPolicy(
    request: answers.SetOrgPolicyRequest,
    requestId?: string,
  ): Promise<answers.SetOrgPolicyResponse> {
    return this.unary(this.client.setOrgPolicy, request, requestId);
  }
}
