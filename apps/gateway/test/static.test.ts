import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDashboardStatic } from '../src/http/static.ts';

const HTML = { accept: 'text/html,application/xhtml+xml' };

describe('the dashboard as static files', () => {
  let dir: string;
  let app: FastifyInstance;
  let bare: FastifyInstance;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'calgate-dashboard-'));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'index.html'), '<!doctype html><title>Calgate</title>');
    await writeFile(join(dir, 'assets', 'app-abc123.js'), 'console.log(1);');
    await writeFile(join(dir, 'assets', 'styles-abc.css'), 'body{}');
    app = Fastify();
    app.get('/api/docs', async () => ({ tools: [] }));
    registerDashboardStatic(app, dir);
    bare = Fastify();
    registerDashboardStatic(bare, join(dir, 'missing'));
  });

  afterAll(async () => {
    await app.close();
    await bare.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('.happy', () => {
    it('serves index.html at / and for client-side paths a browser asks for', async () => {
      for (const url of ['/', '/keys', '/matrix?x=1']) {
        const response = await app.inject({ url, headers: HTML });
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(response.headers['cache-control']).toBe('no-cache');
        expect(response.headers['content-security-policy']).toContain("script-src 'self'");
        expect(response.body).toContain('<title>Calgate</title>');
      }
    });

    it('serves hashed assets with their content type and a year of caching', async () => {
      const js = await app.inject({ url: '/assets/app-abc123.js' });
      expect(js.statusCode).toBe(200);
      expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      const css = await app.inject({ url: '/assets/styles-abc.css' });
      expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
      expect((await app.inject({ url: '/api/docs', headers: HTML })).json()).toEqual({ tools: [] });
    });
  });

  describe('.error', () => {
    it('answers 404 for unknown API paths, missing assets and non-browser requests', async () => {
      expect((await app.inject({ url: '/api/v1/nope', headers: HTML })).statusCode).toBe(404);
      expect((await app.inject({ url: '/oauth/nope', headers: HTML })).statusCode).toBe(404);
      expect((await app.inject({ url: '/assets/app-missing.js' })).statusCode).toBe(404);
      expect((await app.inject({ url: '/keys', headers: { accept: 'application/json' } })).statusCode).toBe(
        404,
      );
    });

    it('explains how to build the dashboard when it is missing', async () => {
      const response = await bare.inject({ url: '/', headers: HTML });
      expect(response.statusCode).toBe(503);
      expect(response.body).toContain('npm run build:dashboard');
    });
  });

  describe('.security', () => {
    it('never reads outside the assets folder', async () => {
      for (const url of [
        '/assets/..%2Findex.html',
        '/assets/%2E%2E%2F%2E%2E%2Fpackage.json',
        '/assets/.hidden.js',
      ]) {
        expect((await app.inject({ url })).statusCode).toBe(404);
      }
    });
  });
});
