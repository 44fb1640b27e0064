// Starts the answers service in-process (start() on port 0) and talks to it over real gRPC.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AppError,
  callUnary,
  createGrpcClient,
  createLogger,
  type ClockOptions,
} from '@support-agent/shared';
import { answers } from '@support-agent/proto';
import { loadAnswersConfig } from '../../src/config.js';
import { start, type AnswersServer } from '../../src/server.js';

export interface RunningAnswers {
  server: AnswersServer;
  client: answers.AnswersServiceClient;
  dataDir: string;
  env: Record<string, string>;
  generate(
    orgId: string,
    question: string,
    policy?: answers.OrgPolicy,
  ): Promise<answers.GenerateAnswerResponse>;
  usage(orgId: string, limit?: number): Promise<answers.GetUsageResponse>;
  setPolicy(orgId: string, policy: answers.OrgPolicy): Promise<void>;
  classify(content: string): Promise<answers.ClassifyTicketResponse>;
  stop(): Promise<void>;
}

/** Env for the service under test; EMBEDDED=true so unset backends use the embedded adapters. */
export function testEnv(overrides: Record<string, string>): Record<string, string> {
  return {
    ANSWERS_ADDR: '127.0.0.1:0',
    EMBEDDED: 'true',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'answers-test-')),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...overrides,
  };
}

export async function startAnswers(
  env: Record<string, string>,
  options: ClockOptions = {},
): Promise<RunningAnswers> {
  const config = loadAnswersConfig(env);
  const server = await start(config, createLogger('answers', env.LOG_LEVEL ?? 'silent'), options);
  const client = createGrpcClient(answers.AnswersServiceClient, `127.0.0.1:${server.port}`);
  const call = { timeoutMs: 20_000 };
  return {
    server,
    client,
    dataDir: env.DATA_DIR!,
    env,
    generate: (orgId, question, policy) =>
      callUnary(client.generateAnswer.bind(client), { orgId, question, policy }, call),
    usage: (orgId, limit = 0) =>
      callUnary(client.getUsage.bind(client), { orgId, deflectionMonthlyLimit: limit }, call),
    setPolicy: async (orgId, policy) => {
      await callUnary(client.setOrgPolicy.bind(client), { orgId, policy }, call);
    },
    classify: (content) =>
      callUnary(client.classifyTicket.bind(client), { content, orgId: '' }, call),
    async stop() {
      client.close();
      await server.stop();
    },
  };
}

/** The AppError a call rejected with (fails the test if it resolved). */
export async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what = 'condition',
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A small KB used across the tests (org-scoped copies are made per test org). */
export const KB = [
  {
    id: 'kb-reset',
    question: 'How do I reset my password?',
    answer:
      'Open Settings, choose Security and click "Reset password". We email you a link that is valid for one hour. ' +
      'If you sign in with SSO, your administrator resets it instead.',
  },
  {
    id: 'kb-export',
    question: 'How do I export tickets to CSV?',
    answer:
      'Go to Tickets, apply the filters you need and choose Export > CSV. Exports of more than 50,000 rows are emailed to you.',
  },
  {
    id: 'kb-invoice',
    question: 'Where can I download my invoices?',
    answer: 'Invoices are under Billing > Invoices. Each one can be downloaded as a PDF.',
  },
];
