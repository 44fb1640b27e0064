import { invalidRequest } from '@support-agent/shared';
import express, { type RequestHandler, type Router } from 'express';
import type { TicketsClient } from '../../clients/tickets.client.js';
import type { ApiKeyRecord, OrgWithSettings } from '../../domain/model.js';
import type { OrgAdmin } from '../../domain/orgs.js';
import { parseSettingsPatch, settingsToJson } from '../../domain/settings.js';
import { TICKET_STATUSES, ticketToJson } from '../http/agent-routes.js';
import { methodNotAllowed } from '../http/errors.js';
import { jsonBody } from '../http/json-body.js';
import { readEnum } from '../http/validation.js';

export const ADMIN_BODY_LIMIT = 1024 * 1024;

export interface AdminRouteDeps {
  auth: RequestHandler;
  orgs: OrgAdmin;
  tickets: TicketsClient;
}

/** Admin API v1 (DESIGN.md §5): organizations, settings, keys, ticket status. */
export function adminRouter(deps: AdminRouteDeps): Router {
  const { auth, orgs, tickets } = deps;
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
    .patch(auth, ...body, async (req, res) => {
      const orgId = String(req.params.org);
      const ticketId = parseTicketId(String(req.params.id));
      const status = readEnum((req.body as Record<string, unknown>).status, {
        param: 'status',
        in: 'body',
        values: TICKET_STATUSES,
        required: true,
      });
      await orgs.requireOrg(orgId);
      const { ticket } = await tickets.updateTicketStatus(
        { orgId, ticketId, status },
        String(req.id),
      );
      if (!ticket) throw new Error('tickets service returned no ticket');
      res.json({
        ...ticketToJson(ticket),
        author_name: ticket.authorName ?? null,
        ai_answer: ticket.aiAnswer ?? null,
        updated_at: ticket.updatedAt,
      });
    })
    .all(methodNotAllowed(['PATCH']));

  return router;
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
