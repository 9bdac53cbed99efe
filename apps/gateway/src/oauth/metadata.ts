import { SCOPES } from './tokens.ts';

/** Where Calgate's authorization server answers, relative to PUBLIC_URL. */
export const OAUTH_PATHS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
  consent: '/consent',
} as const;

/** The protected resource's metadata path for an MCP URL (RFC 9728 §3.1: inserted before the path). */
export function resourceMetadataUrl(mcpUrl: string): string {
  const url = new URL(mcpUrl);
  return `${url.origin}/.well-known/oauth-protected-resource${url.pathname}`;
}

/** RFC 9728 protected resource metadata for /api/mcp. */
export function protectedResourceMetadata(publicUrl: string, mcpUrl: string) {
  return {
    resource: mcpUrl,
    authorization_servers: [publicUrl],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Calgate',
    resource_documentation: `${publicUrl}/api/docs`,
  };
}

/**
 * RFC 8414 authorization server metadata. Calgate issues codes only (no implicit, no password
 * grant), with PKCE S256 only; public clients (auth method none) are the usual MCP clients.
 */
export function authorizationServerMetadata(publicUrl: string) {
  return {
    issuer: publicUrl,
    authorization_endpoint: `${publicUrl}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${publicUrl}${OAUTH_PATHS.token}`,
    registration_endpoint: `${publicUrl}${OAUTH_PATHS.register}`,
    revocation_endpoint: `${publicUrl}${OAUTH_PATHS.revoke}`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${publicUrl}/api/docs`,
  };
}
