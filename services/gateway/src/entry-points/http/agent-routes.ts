import type { tickets as ticketsPb } from '@support-agent/proto';
import { AppError } from '@support-agent/shared';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { AnswersClient } from '../../clients/answers.client.js';
import type { DigestClient } from '../../clients/digest.client.js';
import type { KnowledgeClient } from '../../clients/knowledge.client.js';
import type { TicketsClient } from '../../clients/tickets.client.js';
import type { Scope } from '../../domain/scopes.js';
import type { Challenges } from './auth.js';
import { methodNotAllowed, notFound } from './errors.js';
import { jsonBody } from './json-body.js';
import { grantOf } from './request-context.js';
import { requireScope } from './scopes.js';
import { readEnum, readIdempotencyKeyHeader, readInteger, readString } from './validation.js';

export const TICKET_STATUSES = ['open', 'in_progress', 'resolved', 'closed', 'duplicate'] as const;
export const TICKET_PRIORITIES = ['critical', 'high', 'medium', 'low'] as const;
export const TICKET_CATEGORIES = [
  'bug',
  'feature_request',
  'documentation',
  'how_to',
  'general_question',
] as const;
const MAX_CURSOR_LENGTH = 1024;

export interface AgentRouteDeps {
  authenticate: RequestHandler;
  rateLimit: RequestHandler;
  challenges: Challenges;
  knowledge: KnowledgeClient;
  digest: DigestClient;
  tickets: TicketsClient;
  answers: AnswersClient;
}

/**
 * The five agent operations. Mounted under both `/api/v1/agent` and `/api/agent`; nothing in
 * a response depends on the prefix. Checks run in the contract's order: route (404/405),
 * key (401), scope (403), rate limit (429), body and parameters (400), then the operation.
 */
export function agentRouter(deps: AgentRouteDeps): Router {
  const router = express.Router();
  const guard = (scope: Scope): RequestHandler[] => [
    deps.authenticate,
    requireScope(scope, deps.challenges),
    deps.rateLimit,
  ];

  router
    .route('/kb/search')
    .get(...guard('kb:read'), searchKnowledgeBase(deps.knowledge))
    .all(methodNotAllowed(['GET', 'HEAD']));
  router
    .route('/faq')
    .get(...guard('faq:read'), getFaqDigest(deps.digest))
    .all(methodNotAllowed(['GET', 'HEAD']));
  router
    .route('/tickets')
    .get(...guard('tickets:read'), listTickets(deps.tickets))
    .post(...guard('tickets:write'), ...jsonBody(), createTicket(deps.tickets))
    .all(methodNotAllowed(['GET', 'HEAD', 'POST']));
  router
    .route('/answers')
    .post(...guard('answers:write'), ...jsonBody(), generateAnswer(deps.answers))
    .all(methodNotAllowed(['POST']));
  // Paths relative to the mount point, so both prefixes answer byte-identically.
  router.use(notFound);
  return router;
}

const orgIdOf = (res: Response): string => grantOf(res).key.orgId;
const requestIdOf = (req: Request): string => String(req.id);

function searchKnowledgeBase(knowledge: KnowledgeClient): RequestHandler {
  return async (req, res) => {
    const q = req.query; // a getter that parses the query string on every access
    const query = readString(q.query, {
      param: 'query',
      in: 'query',
      required: true,
      maxLength: 2000,
    });
    const limit = readInteger(q.limit, {
      param: 'limit',
      in: 'query',
      min: 1,
      max: 20,
      default: 5,
    });
    const found = await knowledge.search({ orgId: orgIdOf(res), query, limit }, requestIdOf(req));
    res.json({
      results: found.results.map((hit) => ({
        question: hit.question,
        answer: hit.answer,
        score: hit.score,
      })),
    });
  };
}

function getFaqDigest(digest: DigestClient): RequestHandler {
  return async (req, res) => {
    const { digest: latest } = await digest.getLatestDigest(
      { orgId: orgIdOf(res) },
      requestIdOf(req),
    );
    if (!latest) {
      res.json({
        message: 'No FAQ digest has been generated yet.',
        week_start: null,
        week_end: null,
        ticket_count: 0,
        content: null,
      });
      return;
    }
    res.json({
      message: `FAQ digest for ${latest.weekStart} to ${latest.weekEnd}`,
      week_start: latest.weekStart,
      week_end: latest.weekEnd,
      ticket_count: latest.ticketCount,
      content: latest.content,
    });
  };
}

function listTickets(tickets: TicketsClient): RequestHandler {
  return async (req, res) => {
    const q = req.query;
    const status = readEnum(q.status, { param: 'status', in: 'query', values: TICKET_STATUSES });
    const priority = readEnum(q.priority, {
      param: 'priority',
      in: 'query',
      values: TICKET_PRIORITIES,
    });
    const category = readEnum(q.category, {
      param: 'category',
      in: 'query',
      values: TICKET_CATEGORIES,
    });
    const limit = readInteger(q.limit, {
      param: 'limit',
      in: 'query',
      min: 1,
      max: 20,
      default: 10,
    });
    const cursor = readCursor(q.cursor);
    const page = await tickets.listTickets(
      {
        orgId: orgIdOf(res),
        limit,
        ...(status ? { status } : {}),
        ...(priority ? { priority } : {}),
        ...(category ? { category } : {}),
        ...(cursor ? { cursor } : {}),
      },
      requestIdOf(req),
    );
    res.json({ tickets: page.tickets.map(ticketToJson), next_cursor: page.nextCursor || null });
  };
}

/** A cursor is opaque; one too long to be ours is rejected here, the rest by the service. */
function readCursor(value: unknown): string | undefined {
  const cursor = readString(value, {
    param: 'cursor',
    in: 'query',
    maxLength: Number.MAX_SAFE_INTEGER,
  });
  if (cursor !== undefined && cursor.length > MAX_CURSOR_LENGTH) {
    throw new AppError('invalid_cursor', 'cursor was not produced by this service', {
      param: 'cursor',
    });
  }
  return cursor;
}

/** The public ticket record: every key present, null for unset values. */
export function ticketToJson(t: ticketsPb.Ticket): Record<string, unknown> {
  return {
    id: t.id,
    content: t.content,
    category: t.category ?? null,
    priority: t.priority,
    status: t.status,
    ai_summary: t.aiSummary ?? null,
    created_at: t.createdAt,
  };
}

function createTicket(tickets: TicketsClient): RequestHandler {
  return async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const content = readString(body.content, {
      param: 'content',
      in: 'body',
      required: true,
      maxLength: 4000,
    });
    const authorName = readString(body.authorName, {
      param: 'authorName',
      in: 'body',
      maxLength: 200,
    });
    const bodyKey = readString(body.idempotencyKey, {
      param: 'idempotencyKey',
      in: 'body',
      maxLength: 200,
    });
    const headerKey = readIdempotencyKeyHeader(req.headers['idempotency-key']);
    const idempotencyKey = headerKey ?? bodyKey;
    const created = await tickets.createTicket(
      {
        orgId: orgIdOf(res),
        content,
        ...(authorName !== undefined ? { authorName } : {}),
        ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      },
      requestIdOf(req),
    );
    res.status(201).json({ ticket_id: created.ticketId, duplicate: created.duplicate });
  };
}

function generateAnswer(answers: AnswersClient): RequestHandler {
  return async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const question = readString(body.question, {
      param: 'question',
      in: 'body',
      required: true,
      maxLength: 2000,
    });
    const { settings } = grantOf(res);
    const result = await answers.generateAnswer(
      {
        orgId: orgIdOf(res),
        question,
        policy: {
          deflectionMonthlyLimit: settings.deflectionMonthlyLimit,
          highConfidenceThreshold: settings.highConfidenceThreshold,
        },
      },
      requestIdOf(req),
    );
    res.json({
      answer: result.answer,
      confidence: result.confidence,
      answered_fully: result.answeredFully,
      high_confidence: result.highConfidence,
      ...(result.sources.length > 0
        ? { sources: result.sources.map((s) => ({ question: s.question, score: s.score })) }
        : {}),
    });
  };
}
