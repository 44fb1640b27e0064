import { callUnary, createGrpcClient } from '@support-agent/shared';
import { answers } from '@support-agent/proto';

/** Typed calls to the answers service; every call has a deadline and carries the request id. */
export class AnswersClient {
  private readonly client: answers.AnswersServiceClient;

  constructor(
    readonly address: string,
    private readonly deadlineMs: number,
  ) {
    this.client = createGrpcClient(answers.AnswersServiceClient, address);
  }

  generateAnswer(
    request: answers.GenerateAnswerRequest,
    requestId?: string,
  ): Promise<answers.GenerateAnswerResponse> {
    return callUnary(this.client.generateAnswer.bind(this.client), request, {
      timeoutMs: this.deadlineMs,
      ...(requestId ? { requestId } : {}),
    });
  }

  setOrgPolicy(
    request: answers.SetOrgPolicyRequest,
    requestId?: string,
  ): Promise<answers.SetOrgPolicyResponse> {
    return callUnary(this.client.setOrgPolicy.bind(this.client), request, {
      timeoutMs: this.deadlineMs,
      ...(requestId ? { requestId } : {}),
    });
  }

  close(): void {
    this.client.close();
  }
}
