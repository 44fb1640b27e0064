// The tickets contract against real MariaDB, Redis and NATS JetStream.
import { createTestDatabase } from '../../../test/support/mysql.js';
import { ticketsContract } from './contract.js';
import { readStream, requireEnv, startService } from './helpers.js';

ticketsContract('MySQL, Redis, JetStream', async () => {
  const db = await createTestDatabase('tickets');
  const natsUrl = requireEnv('TEST_NATS_URL');
  const service = await startService({
    MYSQL_URL: db.url,
    REDIS_URL: requireEnv('TEST_REDIS_URL'),
    NATS_URL: natsUrl,
  });
  return {
    client: service.client,
    readEvents: async (orgId) => (await readStream(natsUrl, orgId)).map((m) => m.event),
    async stop() {
      await service.stop();
      await db.drop();
    },
  };
});
