#!/bin/sh
# Prisma CLI wants a native schema engine for `generate`; Calgate never uses it (migrations run
# through packages/store/src/migrate.ts), so this stand-in only tells the CLI it is unavailable.
exit 1
