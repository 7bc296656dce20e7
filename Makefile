.PHONY: install run test generate check-generated typecheck lint lint-openapi tap bench ci

# Installs exactly what the lockfile says, only when node_modules is missing or older than it.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

run: install
	npm start

generate: install
	npm run generate

check-generated: install
	npx tsx scripts/generate.ts --check

typecheck: install
	npx tsc --noEmit

lint: install
	npx eslint .
	npx prettier --check .

lint-openapi: install
	npx redocly lint openapi/openapi.yaml

# The suite on PGlite always; again on a real PostgreSQL when TEST_DATABASE_URL names one.
tap: install
	TEST_BACKEND=pglite npx tap
	@if [ -n "$$TEST_DATABASE_URL" ]; then TEST_BACKEND=postgres npx tap; fi

# The README's test command: everything CI checks.
test: typecheck lint lint-openapi check-generated tap

bench: install
	npm run bench
