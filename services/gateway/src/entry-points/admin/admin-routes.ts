import { AppError, invalidRequest } from '@support-agent/shared';
import type { tickets } from '@support-agent/proto';
import express, { type RequestHandler, type Router } from 'express';
import { ticketToJson } from '../../domain/agent-operations.js';
import { importKbEntries, parseKbEntryId } from '../../domain/kb-import.js';
import type { ApiKeyRecord, OrgWithSettings } from '../../domain/model.js';
import type { OrgAdmin } from '../../domain/orgs.js';
import type {
  AnswersUpstream,
  DigestUpstream,
  KnowledgeUpstream,
  TicketsUpstream,
  TriageUpstream,
} from '../../domain/ports.js';
import { parseSettingsPatch, settingsToJson } from '../../domain/settings.js';
import { isMissing, readEnum } from '../../domain/validation.js';
import { methodNotAllowed } from '../http/errors.js';
import { jsonBody } from '../http/json-body.js';
import { digestToJson } from './digest-json.js';
import { kbImportBody, parseKbImportRows, type KbImportLocals } from './kb-import-body.js';
import { triageRoutes } from './triage-routes.js';

export const ADMIN_BODY_LIMIT = 1024 * 1024;

export interface AdminRouteDeps {
  auth: RequestHandler;
  orgs: OrgAdmin;
  tickets: TicketsUpstream;
  knowledge: KnowledgeUpstream;
  digest: DigestUpstream;
  answers: AnswersUpstream;
  triage: TriageUpstream;
  /** Ticket status values (the OpenAPI document's TicketStatus enum). */
  ticketStatuses: readonly string[];
}

/**
 * Admin API v1 (DESIGN.md §5): organizations, settings, keys, ticket status, KB entries,
 * digest builds and deflection usage.
 */
export function adminRouter(deps: AdminRouteDeps): Router {
  const { auth, orgs } = deps;
  const body = jsonBody(ADMIN_BODY_LIMIT);
  const router = express.Router();

  router
    .route('/orgs')
    .get(auth, async (_req, res) => {
      const list = await orgs.listOrgs();
      res.json({ orgs: list.map(orgToJson) });
    })
    .post(auth, ...body, async (req, res) => {
      const b = req.body as Record<string, unknown>;
      const org = await orgs.createOrg({ name: b.name, id: b.id });
      res.status(201).json({ id: org.id, name: org.name });
    })
    .all(methodNotAllowed(['GET', 'HEAD', 'POST']));

  router
    .route('/orgs/:org/settings')
    .patch(auth, ...body, async (req, res) => {
      const patch = parseSettingsPatch(req.body as Record<string, unknown>);
      const settings = await orgs.updateSettings(String(req.params.org), patch);
      res.json(settingsToJson(settings));
    })
    .all(methodNotAllowed(['PATCH']));

  router
    .route('/orgs/:org/keys')
    .get(auth, async (req, res) => {
      const keys = await orgs.listKeys(String(req.params.org));
      res.json({ keys: keys.map(keyToJson) });
    })
    .post(auth, ...body, async (req, res) => {
      const b = req.body as Record<string, unknown>;
      const { record, key } = await orgs.createKey(String(req.params.org), {
        name: b.name,
        scopes: b.scopes,
      });
      res.status(201).json({ id: record.id, key, scopes: record.scopes });
    })
    .all(methodNotAllowed(['GET', 'HEAD', 'POST']));

  router
    .route('/orgs/:org/keys/:id')
    .delete(auth, async (req, res) => {
      await orgs.revokeKey(String(req.params.org), String(req.params.id));
      res.status(204).end();
    })
    .all(methodNotAllowed(['DELETE']));

  router
    .route('/orgs/:org/tickets/:id')
    .patch(auth, ...body, updateTicket(deps))
    .all(methodNotAllowed(['PATCH']));

  triageRoutes(router, { auth, orgs, triage: deps.triage, bodyLimit: ADMIN_BODY_LIMIT });

  router
    .route('/orgs/:org/kb/entries')
    .post(auth, ...kbImportBody(), importKbEntriesRoute(deps))
    .all(methodNotAllowed(['POST']));
  // Other methods on …/count fall through to the entry route: an entry may be called "count".
  router.route('/orgs/:org/kb/entries/count').get(auth, countKbEntries(deps));
  const entryMethods = methodNotAllowed(['DELETE']);
  const countMethods = methodNotAllowed(['GET', 'HEAD', 'DELETE']);
  router
    .route('/orgs/:org/kb/entries/:id')
    .delete(auth, deleteKbEntry(deps))
    .all((req, res, next) =>
      (req.params.id === 'count' ? countMethods : entryMethods)(req, res, next),
    );

  router
    .route('/orgs/:org/digests')
    .post(auth, ...jsonBody(ADMIN_BODY_LIMIT, { allowEmpty: true }), buildDigest(deps))
    .all(methodNotAllowed(['POST']));
  router
    .route('/orgs/:org/digests/latest')
    .get(auth, latestDigest(deps))
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/orgs/:org/usage')
    .get(auth, getUsage(deps))
    .all(methodNotAllowed(['GET', 'HEAD']));

  return router;
}

/**
 * PATCH …/tickets/{id} with `{status?, category?}` (at least one): a category must be one of
 * the organization's (its own when it defined them, else the built-in five); it is a person's
 * label, which the organization's triage then learns from.
 */
function updateTicket({ orgs, tickets, triage, ticketStatuses }: AdminRouteDeps): RequestHandler {
  return async (req, res) => {
    const orgId = String(req.params.org);
    const ticketId = parseTicketId(String(req.params.id));
    const b = req.body as Record<string, unknown>;
    const status = readEnum(b.status, { param: 'status', in: 'body', values: ticketStatuses });
    const category = isMissing(b.category) ? undefined : b.category;
    if (status === undefined && category === undefined)
      throw invalidRequest('give status, category or both', 'status');
    await orgs.requireOrg(orgId);
    let ticket: tickets.Ticket | undefined;
    if (category !== undefined) {
      const current = await triage.getTriageStatus({ orgId }, String(req.id));
      const allowed = current.categories.length > 0 ? current.categories : current.activeCategories;
      if (typeof category !== 'string' || !allowed.includes(category))
        throw invalidRequest(`category must be one of: ${allowed.join(', ')}`, 'category');
      ({ ticket } = await tickets.setTicketCategory({ orgId, ticketId, category }, String(req.id)));
    }
    if (status !== undefined)
      ({ ticket } = await tickets.updateTicketStatus({ orgId, ticketId, status }, String(req.id)));
    if (!ticket) throw new Error('tickets service returned no ticket');
    res.json({
      ...ticketToJson(ticket),
      author_name: ticket.authorName ?? null,
      ai_answer: ticket.aiAnswer ?? null,
      updated_at: ticket.updatedAt,
    });
  };
}

function importKbEntriesRoute({ orgs, knowledge }: AdminRouteDeps): RequestHandler {
  return async (req, res) => {
    const orgId = String(req.params.org);
    const format = (res.locals as KbImportLocals).kbImportFormat!;
    const rows = await parseKbImportRows(req.body, format);
    await orgs.requireOrg(orgId);
    const result = await importKbEntries(knowledge, orgId, rows, { requestId: String(req.id) });
    res.json(result);
  };
}

function deleteKbEntry({ orgs, knowledge }: AdminRouteDeps): RequestHandler {
  return async (req, res) => {
    const orgId = String(req.params.org);
    const id = parseKbEntryId(String(req.params.id));
    await orgs.requireOrg(orgId);
    const { deleted } = await knowledge.deleteEntries({ orgId, ids: [id] }, String(req.id));
    if (deleted === 0) {
      throw new AppError('not_found', `KB entry ${id} not found in organization ${orgId}`);
    }
    res.status(204).end();
  };
}

function countKbEntries({ orgs, knowledge }: AdminRouteDeps): RequestHandler {
  return async (req, res) => {
    const orgId = String(req.params.org);
    await orgs.requireOrg(orgId);
    const { count } = await knowledge.countEntries({ orgId }, String(req.id));
    res.json({ count });
  };
}

const ISO_DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/** The shape is checked here; the digest service judges the date (a Monday, not in the future). */
function readWeekStart(value: unknown): string | undefined {
  if (isMissing(value)) return undefined;
  if (typeof value !== 'string' || !ISO_DATE.test(value)) {
    throw invalidRequest('week_start must be a date in the form YYYY-MM-DD', 'week_start');
  }
  return value;
}

function buildDigest({ orgs, digest }: AdminRouteDeps): RequestHandler {
  return async (req, res) => {
    const orgId = String(req.params.org);
    const weekStart = readWeekStart((req.body as Record<string, unknown>).week_start);
    await orgs.requireOrg(orgId);
    const { digest: built } = await digest.buildDigest(
      { orgId, ...(weekStart !== undefined ? { weekStart } : {}) },
      String(req.id),
    );
    if (!built) throw new Error('digest service returned no digest');
    res.json(digestToJson(built));
  };
}

function latestDigest({ orgs, digest }: AdminRouteDeps): RequestHandler {
  return async (req, res) => {
    const orgId = String(req.params.org);
    await orgs.requireOrg(orgId);
    const { digest: latest } = await digest.getLatestDigest({ orgId }, String(req.id));
    if (!latest) throw new AppError('not_found', `no digest has been built for ${orgId} yet`);
    res.json(digestToJson(latest));
  };
}

function getUsage({ orgs, answers }: AdminRouteDeps): RequestHandler {
  return async (req, res) => {
    const org = await orgs.requireOrg(String(req.params.org));
    const usage = await answers.getUsage(
      { orgId: org.id, deflectionMonthlyLimit: org.settings.deflectionMonthlyLimit },
      String(req.id),
    );
    res.json({
      month: usage.month,
      deflections_used: usage.deflectionsUsed,
      deflection_limit: usage.deflectionLimit,
    });
  };
}

function parseTicketId(value: string): number {
  const n = /^[0-9]{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= Number.MAX_SAFE_INTEGER))
    throw invalidRequest('ticket id must be a positive integer', 'id');
  return n;
}

export function orgToJson(org: OrgWithSettings): Record<string, unknown> {
  return {
    id: org.id,
    name: org.name,
    created_at: org.createdAt.toISOString(),
    settings: settingsToJson(org.settings),
  };
}

export function keyToJson(key: ApiKeyRecord): Record<string, unknown> {
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt ? key.revokedAt.toISOString() : null,
  };
}
