// The ports of the gateway's domain: what the operations, key and org rules need from the
// outside. Adapters live in data-access/ (the stores, one gRPC client per upstream service,
// the rate-limit counters) and are wired in composition.ts. Narrower views of an upstream
// sit beside the use case that needs only them (KbWriter, DemoKbTarget, PolicyReceiver).
import type { answers, digest, knowledge, tickets } from '@support-agent/proto';
import type { TriageClient } from '@support-agent/shared';
import type { ApiKeyRecord, KeyGrant, Org, OrgSettings, OrgWithSettings } from './model.js';
import type { SettingsPatch } from './settings.js';

/**
 * Organizations, their settings and API keys. Implemented over MySQL (production) and over
 * a JSONL journal (embedded mode); both behave the same.
 */
export interface GatewayStore {
  /** Creates the organization with its settings; false when the id is taken. */
  createOrg(org: Org, settings: OrgSettings): Promise<boolean>;
  getOrg(id: string): Promise<OrgWithSettings | undefined>;
  /** Oldest first. */
  listOrgs(): Promise<OrgWithSettings[]>;
  countOrgs(): Promise<number>;
  /** undefined when the organization does not exist. */
  updateSettings(orgId: string, patch: SettingsPatch, at: Date): Promise<OrgSettings | undefined>;
  insertApiKey(key: ApiKeyRecord): Promise<void>;
  /** Oldest first, revoked ones included. */
  listApiKeys(orgId: string): Promise<ApiKeyRecord[]>;
  /** Sets revoked_at once (a repeat keeps the first time); undefined when no such key in the org. */
  revokeApiKey(orgId: string, keyId: string, at: Date): Promise<ApiKeyRecord | undefined>;
  /** The key with this hash (revoked or not) and its organization's settings. */
  findKeyByHash(keyHash: string): Promise<KeyGrant | undefined>;
  /** Throws when the store is unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// The upstream services. Every call has a deadline and carries the request id (`requestId`,
// sent as metadata); a failure rejects with an AppError whose code maps to the HTTP status.

export interface TicketsUpstream {
  createTicket(
    request: tickets.CreateTicketRequest,
    requestId?: string,
  ): Promise<tickets.CreateTicketResponse>;
  listTickets(
    request: tickets.ListTicketsRequest,
    requestId?: string,
  ): Promise<tickets.ListTicketsResponse>;
  updateTicketStatus(
    request: tickets.UpdateTicketStatusRequest,
    requestId?: string,
  ): Promise<tickets.UpdateTicketStatusResponse>;
  setTicketCategory(
    request: tickets.SetTicketCategoryRequest,
    requestId?: string,
  ): Promise<tickets.SetTicketCategoryResponse>;
}

export interface KnowledgeUpstream {
  search(request: knowledge.SearchRequest, requestId?: string): Promise<knowledge.SearchResponse>;
  /**
   * Search, answered as the public API's SearchResults document, serialized (UTF-8 JSON):
   * byte for byte `JSON.stringify(searchResultsOf(await search(request)))`.
   */
  searchResultsJson(request: knowledge.SearchRequest, requestId?: string): Promise<Uint8Array>;
  upsertEntries(
    request: knowledge.UpsertEntriesRequest,
    requestId?: string,
  ): Promise<knowledge.UpsertEntriesResponse>;
  deleteEntries(
    request: knowledge.DeleteEntriesRequest,
    requestId?: string,
  ): Promise<knowledge.DeleteEntriesResponse>;
  countEntries(
    request: knowledge.CountEntriesRequest,
    requestId?: string,
  ): Promise<knowledge.CountEntriesResponse>;
}

export interface AnswersUpstream {
  generateAnswer(
    request: answers.GenerateAnswerRequest,
    requestId?: string,
  ): Promise<answers.GenerateAnswerResponse>;
  getUsage(request: answers.GetUsageRequest, requestId?: string): Promise<answers.GetUsageResponse>;
  setOrgPolicy(
    request: answers.SetOrgPolicyRequest,
    requestId?: string,
  ): Promise<answers.SetOrgPolicyResponse>;
}

export interface DigestUpstream {
  getLatestDigest(
    request: digest.GetLatestDigestRequest,
    requestId?: string,
  ): Promise<digest.GetLatestDigestResponse>;
  buildDigest(
    request: digest.BuildDigestRequest,
    requestId?: string,
  ): Promise<digest.BuildDigestResponse>;
}

/** Each organization's own triage (the answers service's TriageService), for the admin API. */
export type TriageUpstream = TriageClient;

/** The upstream services, as the operations and the admin API call them. */
export interface Upstreams {
  tickets: TicketsUpstream;
  knowledge: KnowledgeUpstream;
  answers: AnswersUpstream;
  digest: DigestUpstream;
  triage: TriageUpstream;
}

// Rate limits: fixed windows per key, per organization and (failed authentications) per IP.

/** Length of every rate-limit window, in seconds. */
export const WINDOW_SECONDS = 60;

export type RatePolicy = 'key' | 'org';

export interface RateDecision {
  allowed: boolean;
  /** `RateLimit-Policy` header value. */
  policyHeader: string;
  /** `RateLimit` header value (the policy nearest exhaustion). */
  limitHeader: string;
  /** Seconds to wait, when not allowed. */
  retryAfter: number;
  /** The policies that refused the request (empty when allowed). */
  refusedBy: readonly RatePolicy[];
}

/**
 * Per-key and per-organization request limits. Quotas come from each organization's settings
 * and travel with each call, so a settings change applies at once. The key is counted first: a
 * request over its key's limit does not also spend the organization's budget.
 */
export interface RequestRateLimiter {
  /**
   * Counts `cost` requests (1 unless the call stands for several, e.g. an MCP batch of N
   * messages) against the key and then the organization.
   */
  consume(
    keyId: string,
    keyQuota: number,
    orgId: string,
    orgQuota: number,
    cost?: number,
  ): Promise<RateDecision>;
}

/**
 * Failed authentications per client IP. After the configured number of failures in a window,
 * further requests from that IP without a valid key are refused. Never throws: an unavailable
 * counter lets requests through.
 */
export interface AuthFailureThrottle {
  /** Seconds until the IP may try again, or undefined when it is not blocked. */
  blockedFor(ip: string): Promise<number | undefined>;
  /** Counts a failure; returns seconds to wait when this failure is over the limit. */
  recordFailure(ip: string): Promise<number | undefined>;
}
