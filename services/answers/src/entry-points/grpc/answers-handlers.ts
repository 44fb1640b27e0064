import { AppError, requestIdOf, unaryHandler, type Logger } from '@support-agent/shared';
import { answers } from '@support-agent/proto';
import {
  generateAnswer,
  newRequestId,
  requireOrgId,
  requireQuestion,
  resolvePolicy,
  validatePolicy,
} from '../../domain/generate-answer.js';
import { monthOf } from '../../domain/month.js';
import { labelTicket, type TriageDeps } from '../../domain/triage.js';

/** gRPC AnswersService: thin adapters from the wire to the use cases. */
export function createAnswersHandlers(
  deps: TriageDeps,
  logger: Logger,
): answers.AnswersServiceServer {
  return {
    generateAnswer: unaryHandler(
      logger,
      'GenerateAnswer',
      async (req: answers.GenerateAnswerRequest, call) => {
        const orgId = requireOrgId(req.orgId);
        const question = requireQuestion(req.question);
        const policy = await resolvePolicy(deps.policies, orgId, req.policy);
        const result = await generateAnswer(deps, {
          orgId,
          question,
          policy,
          requestId: newRequestId(),
          deadline: deadlineOf(call.getDeadline()),
          mayAnswerWithoutLedger: true,
        });
        logger.info(
          {
            orgId,
            requestId: requestIdOf(call),
            confidence: result.confidence,
            highConfidence: result.highConfidence,
            provider: result.provider,
            sources: result.sources.length,
          },
          'answer generated',
        );
        return {
          answer: result.answer,
          confidence: result.confidence,
          answeredFully: result.answeredFully,
          highConfidence: result.highConfidence,
          sources: result.sources,
        };
      },
    ),

    getUsage: unaryHandler(logger, 'GetUsage', async (req: answers.GetUsageRequest) => {
      const orgId = requireOrgId(req.orgId);
      if (!Number.isInteger(req.deflectionMonthlyLimit) || req.deflectionMonthlyLimit < 0) {
        throw new AppError(
          'invalid_request',
          'deflection_monthly_limit must be a positive integer',
          {
            param: 'deflection_monthly_limit',
          },
        );
      }
      const limit =
        req.deflectionMonthlyLimit > 0
          ? req.deflectionMonthlyLimit
          : (await resolvePolicy(deps.policies, orgId, undefined)).deflectionMonthlyLimit;
      const month = monthOf(deps.now());
      return {
        month,
        deflectionsUsed: await deps.ledger.used(orgId, month),
        deflectionLimit: limit,
      };
    }),

    setOrgPolicy: unaryHandler(logger, 'SetOrgPolicy', async (req: answers.SetOrgPolicyRequest) => {
      const orgId = requireOrgId(req.orgId);
      if (!req.policy)
        throw new AppError('invalid_request', 'policy is required', { param: 'policy' });
      await deps.policies.set(orgId, validatePolicy(req.policy), deps.now());
      return {};
    }),

    classifyTicket: unaryHandler(
      logger,
      'ClassifyTicket',
      async (req: answers.ClassifyTicketRequest) => {
        const labels = await labelTicket(deps, req.content, req.orgId || undefined);
        return {
          modelVersion: labels.modelVersion,
          category: labels.category,
          priority: labels.priority,
          summary: labels.summary,
          probabilities: labels.probabilities ?? {},
          provider: labels.provider,
        };
      },
    ),
  };
}

/** A gRPC deadline as epoch ms; undefined when the caller set none. */
function deadlineOf(deadline: Date | number): number | undefined {
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(ms) ? ms : undefined;
}
