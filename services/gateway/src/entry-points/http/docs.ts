import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Express, RequestHandler } from 'express';
import { methodNotAllowed } from './errors.js';

/** This service's own page and initializer (static/docs), beside src/ and dist/. */
const STATIC_DIR = fileURLToPath(new URL('../../../static/docs/', import.meta.url));
/** The Swagger UI distribution, served from the installed package (no CDN). */
const SWAGGER_UI_DIR = path.dirname(
  createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
);

/**
 * Only scripts and styles from this origin: the initializer is a file, not an inline script.
 * Swagger UI sets some inline styles; the spec and "try it out" requests go to this origin.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  file: string;
  type: string;
}

const ASSETS: Record<string, Asset> = {
  'swagger-ui.css': { file: path.join(SWAGGER_UI_DIR, 'swagger-ui.css'), type: 'text/css' },
  'swagger-ui-bundle.js': {
    file: path.join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js'),
    type: 'text/javascript',
  },
  'favicon-32x32.png': { file: path.join(SWAGGER_UI_DIR, 'favicon-32x32.png'), type: 'image/png' },
  'favicon-16x16.png': { file: path.join(SWAGGER_UI_DIR, 'favicon-16x16.png'), type: 'image/png' },
  'swagger-initializer.js': {
    file: path.join(STATIC_DIR, 'swagger-initializer.js'),
    type: 'text/javascript',
  },
};

/**
 * `GET /docs`: the human-readable API reference, Swagger UI rendering
 * `/api/v1/agent/openapi.json`, with its assets under `/docs/…`. No key needed.
 */
export function mountDocs(app: Express): void {
  // Read once at start-up: a missing file fails the start, not a request.
  const page = readFileSync(path.join(STATIC_DIR, 'index.html'));
  const assets = new Map(
    Object.entries(ASSETS).map(([name, a]) => [name, { body: readFileSync(a.file), type: a.type }]),
  );

  const securityHeaders: RequestHandler = (_req, res, next) => {
    res.set('Content-Security-Policy', DOCS_CSP);
    res.set('Referrer-Policy', 'no-referrer');
    res.set('X-Frame-Options', 'DENY');
    next();
  };

  app
    .route('/docs')
    .get(securityHeaders, (_req, res) => {
      res.set('Cache-Control', 'no-cache');
      res.type('text/html; charset=utf-8').send(page);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  app
    .route('/docs/:asset')
    .get((req, res, next) => {
      const asset = assets.get(String(req.params.asset));
      if (!asset) return next(); // → 404 not_found
      res.set('Cache-Control', 'public, max-age=3600');
      res.type(asset.type).send(asset.body);
    })
    .all((req, res, next) => {
      if (!assets.has(String(req.params.asset))) return next();
      methodNotAllowed(['GET', 'HEAD'])(req, res, next);
    });
}
