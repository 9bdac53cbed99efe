-- The address the request came from, as the gateway saw it: Fastify's `request.ip`, which is the
-- X-Forwarded-For client behind a proxy trusted by TRUST_PROXY and the connecting peer otherwise.
-- Recorded for tool calls and dashboard actions alike; null for rows from before this column.
-- Text rather than inet: the writer stores only what `net.isIP` accepts (IPv4-mapped IPv6 as
-- plain IPv4), and a text column can never make Postgres reject an audit row over its address.
ALTER TABLE "audit_log" ADD COLUMN "client_address" TEXT;
