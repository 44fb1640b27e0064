// Where the deployment files are, for scripts/validate-deploy.ts and the tests in test/deploy.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const OVERLAYS_DIR = path.join(ROOT, 'deploy/k8s/overlays');
export const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');
export const DOTENV_FILE = path.join(ROOT, '.env');
export const COMPOSE_SCHEMA_FILE = path.join(ROOT, 'test/fixtures/compose-spec/compose-spec.json');
